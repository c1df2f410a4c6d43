/* lfs.h: the Git LFS batch API's requests (SPEC.md §4 "Git LFS"; git-lfs's
 * docs/api/batch.md and basic-transfers.md): a batch request's JSON checked and bounded,
 * and where an object lives. Pure: no I/O. */
#ifndef SANDBOXD_LFS_H
#define SANDBOXD_LFS_H
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "sandboxd/common/err.h"

#define LFS_OID_LEN 64                       /* SHA-256, lower-case hex */
#define LFS_BATCH_MAX 1000                   /* objects in one batch */
#define LFS_OBJECT_MAX ((int64_t)2 << 30)    /* nginx's body limit for git's locations */
#define LFS_MEDIA_TYPE "application/vnd.git-lfs+json"

struct lfs_object {
	char oid[LFS_OID_LEN + 1];
	int64_t size;
};

struct lfs_batch {
	int upload;                          /* operation "upload"; else "download" */
	size_t n;
	struct lfs_object objects[LFS_BATCH_MAX];
};

/* 1 when s is an oid: 64 lower-case hex digits. */
int lfs_oid_valid(const char *s) __attribute__((warn_unused_result));

/* Reads a batch request: operation "download" or "upload", objects [{oid, size}] (1 to
 * LFS_BATCH_MAX, size 0 to LFS_OBJECT_MAX is checked per object by the caller: a size past
 * it is that object's error, not the batch's), transfers (when given, must list "basic"),
 * hash_algo (when given, "sha256"). ERR_INVALID with e naming the field; out is then
 * unspecified. */
int lfs_batch_parse(json_object *body, struct lfs_batch *out, struct err *e)
	__attribute__((warn_unused_result));

/* "<repo_dir>/lfs/objects/<oid[0:2]>/<oid[2:4]>/<oid>" (git-lfs's own layout) into out;
 * 0, or ERR_TOOBIG when it does not fit n. */
int lfs_object_path(char *out, size_t n, const char *repo_dir, const char *oid)
	__attribute__((warn_unused_result));

/* A pointer file (git-lfs's docs/spec.md) is under 1024 bytes. */
#define LFS_POINTER_MAX 1024

/* The oid a blob's bytes d[0..n) point at when they are an LFS pointer file: under
 * LFS_POINTER_MAX bytes, a first line "version https://…", and a line "oid sha256:<64
 * lower-case hex digits>". 1 with oid filled, else 0 with oid "". What the reaper reads
 * in every small blob a ref reaches (decision 0089): untrusted bytes. */
int lfs_pointer_oid(const char *d, size_t n, char oid[LFS_OID_LEN + 1])
	__attribute__((warn_unused_result));

#endif
