/* sandboxctl key: generate an owner's signing key pair, prove possession of it; and
 * read_private_key, which git-url uses too. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "sandboxd/forge/account.h"
#include "sandboxd/forge/giturl.h"
#include "sandboxd/proto/jwt.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

/* The private key in path (PEM, at most JWT_PEM_MAX bytes) into *key. */
int read_private_key(const char *path, EVP_PKEY **key, struct err *e)
{
	char pem[JWT_PEM_MAX + 1];
	FILE *f;
	size_t n;
	int rc;

	if (!(f = fopen(path, "r")))
		return err_set(e, ERR_NOTFOUND, "cannot read %s", path);
	n = fread(pem, 1, sizeof(pem) - 1, f);
	fclose(f);
	pem[n] = 0;
	rc = jwt_key_load_pem(pem, n, JWT_KEY_PRIVATE, key, e);
	OPENSSL_cleanse(pem, sizeof(pem));
	return rc;
}

/* key proof --key PRIVATE.pem --login LOGIN: the proof of possession that registering the
 * key's public half as LOGIN needs (giturl.h); valid for GITURL_PROOF_TTL seconds. */
static int key_proof(int argc, char **argv)
{
	const char *path = NULL, *login = NULL;
	EVP_PKEY *key = NULL;
	char *proof = NULL;
	struct err e;
	int rc;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--key") == 0)
			path = argv[i + 1];
		else if (strcmp(argv[i], "--login") == 0)
			login = argv[i + 1];
	}
	if (!path || !login)
		return usage("key proof --key PRIVATE.pem --login LOGIN");
	if ((rc = account_valid_login(login, "--login", &e)))
		return fail(rc, &e);
	if ((rc = read_private_key(path, &key, &e)) ||
	    (rc = giturl_key_proof_make(key, login, (int64_t)time(NULL), &proof, &e)))
		goto out;
	printf("%s\n", proof);
out:
	free(proof);
	EVP_PKEY_free(key);
	return rc ? fail(rc, &e) : EXIT_OK;
}

int cmd_key(int argc, char **argv)
{
	const char *path = NULL;
	EVP_PKEY *key = NULL;
	char *priv = NULL, *pub = NULL, kid[JWT_KID_MAX + 1];
	struct err e;
	int fd, rc;

	if (wants_help(argc, argv))
		return help("key");
	if (argc == 6 && strcmp(argv[1], "proof") == 0)
		return key_proof(argc, argv);
	if (argc != 4 || strcmp(argv[1], "generate") || strcmp(argv[2], "--out"))
		return usage("key generate --out PRIVATE.pem | key proof --key PRIVATE.pem --login LOGIN");
	path = argv[3];
	if ((rc = jwt_key_generate(&key, &e)) || (rc = jwt_kid(key, kid, &e)) ||
	    (rc = jwt_key_pem(key, JWT_KEY_PRIVATE, &priv, &e)) ||
	    (rc = jwt_key_pem(key, JWT_KEY_PUBLIC, &pub, &e)))
		goto out;
	/* The private key is born 0600 and never overwrites anything. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, priv, strlen(priv)) != (ssize_t)strlen(priv) || close(fd)) {
		rc = err_set(&e, ERR_FAIL, "cannot write %s (it must not exist yet)", path);
		goto out;
	}
	printf("%s", pub);
	fprintf(stderr, "private key in %s, kid %s; register the public key with POST "
		"/api/v3/user/keys {public_key, proof} (proof: sandboxctl key proof)\n", path, kid);
out:
	if (priv) {
		OPENSSL_cleanse(priv, strlen(priv));
		free(priv);
	}
	free(pub);
	EVP_PKEY_free(key);
	return rc ? fail(rc, &e) : EXIT_OK;
}
