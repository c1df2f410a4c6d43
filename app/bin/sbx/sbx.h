/* sbx.h: what sbx.c and its files (app/bin/sbx/, one concern each) share. sbx is a client
 * of the REST API: libcurl and json-c only, never the service's library (a client is
 * simple, and builds without PostgreSQL or libgit2). Internal to sbx: not in include/.
 * Every int here is an exit code or a result: warn_unused_result, as in include/. */
#ifndef SBX_SBX_H
#define SBX_SBX_H
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>

#define WUR __attribute__((warn_unused_result))

/* Exit codes (man/sbx.1 "EXIT STATUS"); exec exits with its command's own code instead. */
enum { SBX_OK = 0, SBX_FAIL = 1, SBX_USAGE = 2 };

/* A growing byte buffer, always NUL-terminated (len excludes the NUL). */
struct buf {
	char *p;
	size_t len, cap;
};
int buf_add(struct buf *b, const void *data, size_t n) WUR; /* 0, -1 out of memory */
void buf_free(struct buf *b);

/* config.c: where to call and as whom. */
struct sbx {
	char url[1024];   /* no trailing slash */
	char token[512];  /* never printed */
	int json;         /* --json: print the server's answers as they are */
};
/* SANDBOXD_URL and SANDBOXD_TOKEN, each else from the config file (config_path); prints
 * what is missing or wrong and returns SBX_USAGE, else SBX_OK. */
int config_load(struct sbx *s) WUR;
/* $XDG_CONFIG_HOME/sandboxd/config, else $HOME/.config/sandboxd/config, into out. */
int config_path(char *out, size_t n) WUR;
/* Parses the text of a config file (key = value lines) into s, for the keys not yet set;
 * on a bad line writes why (naming the line) to why and returns -1. */
int config_parse(struct sbx *s, const char *text, char *why, size_t whyn) WUR;

/* http.c: one request. Path is under the URL (starts with '/'); body JSON text or NULL. */
struct reply {
	long status;      /* 0: no answer (then err says why) */
	struct buf body;
	char err[1400];
};
int http_json(const struct sbx *s, const char *method, const char *path, const char *body,
	      struct reply *r) WUR; /* 0 on any HTTP answer, -1 none */
/* Prints the refusal on stderr: "sbx: <server's error or message> (HTTP <status>)", or
 * why nothing answered; returns SBX_FAIL. */
int http_fail(const struct reply *r) WUR;
/* The parts common to every request: bearer token, user agent, timeouts. */
struct curl_slist;
void *http_handle(const struct sbx *s, const char *url, struct curl_slist **hdrs,
		  const char *extra_header);
/* A streaming write callback's first step: the answer's status, read once into *status
 * (0 until then), and the body of one that is not 200 kept in refusal (at most 64 KiB) for
 * http_fail. 1: the bytes p[0..n) were a refusal's, *take what the callback returns (0
 * past the bound or out of memory); 0: they are a 200's to handle. */
int http_refusal(void *c, long *status, struct buf *refusal, const char *p, size_t n,
		 size_t *take) WUR;
/* curl_easy_escape of s into out; -1 when it does not fit. */
int url_escape(const char *s, char *out, size_t n) WUR;

/* sandbox.c: the scoped route of sandbox id (GET /api/v3/sandboxes/{id} names its
 * repository): "<url-less path>/api/v3/repos/o/r/diffinery/sandboxes/<id>" into out. */
int sandbox_path(const struct sbx *s, const char *id, char *out, size_t n) WUR;
/* A call expected to answer want: with --json prints the answer as it came, else hands the
 * parsed answer to show (when not NULL); any other answer goes to http_fail. */
int call_json(struct sbx *s, const char *method, const char *path, const char *body, long want,
	      int (*show)(struct json_object *o)) WUR;
/* The string field k of o, or NULL. */
const char *str_field(struct json_object *o, const char *k);

/* ndjson.c: a stream of lines cut as bytes arrive, each line handed over whole. */
struct ndjson {
	struct buf line;
	size_t max;        /* longest line taken */
	int (*on_line)(void *ctx, const char *line, size_t n); /* non-zero stops */
	void *ctx;
	int stopped;       /* on_line's non-zero, or -1 for a line past max */
};
void ndjson_init(struct ndjson *j, size_t max, int (*on_line)(void *, const char *, size_t),
		 void *ctx);
/* Feeds n bytes; 0, or what stopped the stream (kept in stopped). */
int ndjson_feed(struct ndjson *j, const char *p, size_t n) WUR;
/* The end of the stream: a last line without its newline is handed over too. */
int ndjson_end(struct ndjson *j);
void ndjson_free(struct ndjson *j);

/* quote.c: argv joined into one bash command line, each word quoted when it needs it
 * ('…' with ' as '\''), so that bash -c runs exactly these words. */
int shell_join(int argc, char **argv, struct buf *out) WUR;

/* progress.c: a bar on stderr for transfers over 1 MiB when stderr is a terminal. */
struct progress {
	int on;
	const char *label;
	int drawn;
};
void progress_init(struct progress *p, const char *label);
int progress_cb(void *ctx, long long dltotal, long long dlnow, long long ultotal, long long ulnow);
void progress_done(struct progress *p);

/* The commands: argv from the command's name on; the exit code. */
int cmd_create(struct sbx *s, int argc, char **argv) WUR;  /* sandbox.c */
int cmd_close(struct sbx *s, int argc, char **argv) WUR;   /* sandbox.c */
int cmd_list(struct sbx *s, int argc, char **argv) WUR;    /* list.c */
int cmd_preview(struct sbx *s, int argc, char **argv) WUR; /* sandbox.c */
int cmd_exec(struct sbx *s, int argc, char **argv) WUR;    /* exec.c */
int cmd_cp(struct sbx *s, int argc, char **argv) WUR;      /* cp.c */
int cmd_ls(struct sbx *s, int argc, char **argv) WUR;      /* ls.c */

/* sbx.c: msg (when not NULL) and the usage on stderr; SBX_USAGE. */
int usage(const char *msg) WUR;
/* Prints "sbx: <fmt>" on stderr; returns code. */
int say(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the JSON text as it came, with a newline (--json). */
void print_json_text(const struct buf *b);
#endif
