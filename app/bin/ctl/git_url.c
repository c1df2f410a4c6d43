/* sandboxctl git-url: signs an owner-signed git URL locally, with no server. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sandboxd/forge/giturl.h"
#include "sandboxd/proto/jwt.h"
#include "sandboxd/lib/num.h"
#include "ctl.h"
#include "sandboxd/common/banned.h"

/* "PATTERN=no-push,no-force-push" into p. */
static int parse_policy(const char *arg, struct jwt_ref_policy *p)
{
	const char *eq = strrchr(arg, '=');
	char ops[64];

	if (!eq || eq == arg || (size_t)(eq - arg) > JWT_PATTERN_MAX || strlen(eq + 1) >= sizeof(ops))
		return -1;
	snprintf(p->pattern, sizeof(p->pattern), "%.*s", (int)(eq - arg), arg);
	snprintf(ops, sizeof(ops), "%s", eq + 1);
	p->ops = 0;
	for (char *s = ops, *comma; s; s = comma ? comma + 1 : NULL) {
		if ((comma = strchr(s, ',')))
			*comma = 0;
		if (strcmp(s, "no-push") == 0)
			p->ops |= JWT_OP_NO_PUSH;
		else if (strcmp(s, "no-force-push") == 0)
			p->ops |= JWT_OP_NO_FORCE_PUSH;
		else
			return -1;
	}
	return 0;
}

/* What git-url is asked for: the claims it signs, and where and with what. */
struct git_url_args {
	const char *keyfile, *repo, *base;
	int64_t ttl, iat;
	struct jwt_claims c;
};

/* The options into a; 0, or the exit code of a usage error (printed). */
static int git_url_options(int argc, char **argv, struct git_url_args *a)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "repo", required_argument, NULL, 'r' },
		{ "scope", required_argument, NULL, 's' },
		{ "ttl", required_argument, NULL, 't' },
		{ "kind", required_argument, NULL, 'K' },
		{ "policy", required_argument, NULL, 'p' },
		{ "url", required_argument, NULL, 'u' },
		{ "issued-at", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct jwt_claims *c = &a->c;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'k': a->keyfile = optarg; break;
		case 'r': a->repo = optarg; break;
		case 's':
			if (strcmp(optarg, "git:read") == 0)
				c->scopes |= JWT_SCOPE_READ;
			else if (strcmp(optarg, "git:write") == 0)
				c->scopes |= JWT_SCOPE_WRITE;
			else
				return usage("--scope must be git:read or git:write");
			break;
		case 't':
			if (num_parse(optarg, 1, JWT_MAX_TTL, &a->ttl))
				return usage("--ttl must be 1 to 3600 seconds");
			break;
		case 'K':
			if (strcmp(optarg, "normal") && strcmp(optarg, "ephemeral"))
				return usage("--kind must be normal or ephemeral");
			c->ephemeral = strcmp(optarg, "ephemeral") == 0;
			break;
		case 'p':
			if (c->n_ref_policies == JWT_MAX_REF_POLICIES ||
			    parse_policy(optarg, &c->ref_policies[c->n_ref_policies++]))
				return usage("--policy must be PATTERN=no-push|no-force-push[,…]");
			break;
		case 'u': a->base = optarg; break;
		case 'i':
			if (num_parse(optarg, 0, JWT_TIME_MAX - JWT_MAX_TTL, &a->iat))
				return usage("--issued-at must be a Unix time");
			break;
		default: return usage(NULL);
		}
	}
	if (optind != argc || !a->keyfile || !a->repo)
		return usage("git-url needs --key and --repo");
	if (!a->base || (strncmp(a->base, "http://", 7) && strncmp(a->base, "https://", 8)))
		return usage("--url (or SANDBOXD_PUBLIC_URL) must be the service's http(s) URL");
	if (!c->scopes)
		c->scopes = JWT_SCOPE_READ;
	return 0;
}

int cmd_git_url(int argc, char **argv)
{
	struct git_url_args a = { .base = getenv("SANDBOXD_PUBLIC_URL"), .ttl = JWT_DEFAULT_TTL,
				  .iat = (int64_t)time(NULL) };
	char owner[48], name[104], *tok = NULL;
	EVP_PKEY *key = NULL;
	struct err e;
	int rc;

	if (wants_help(argc, argv))
		return help("git-url");
	if ((rc = git_url_options(argc, argv, &a)))
		return rc;
	if ((rc = split_repo(a.repo, owner, sizeof(owner), name, sizeof(name), &e)))
		return fail(rc, &e);
	if ((rc = read_private_key(a.keyfile, &key, &e)) == ERR_NOTFOUND)
		return fail(rc, &e);
	if (rc)
		goto out;
	/* An owner's key signs as the owner: iss is the owner, the audience the service's. */
	snprintf(a.c.iss, sizeof(a.c.iss), "%s", owner);
	snprintf(a.c.owner, sizeof(a.c.owner), "%.39s", owner);
	snprintf(a.c.name, sizeof(a.c.name), "%.100s", name);
	a.c.iat = a.iat;
	a.c.exp = a.iat + a.ttl;
	if ((rc = giturl_sign(key, &a.c, &tok, &e)))
		goto out;
	const char *proto = strncmp(a.base, "https://", 8) == 0 ? "https://" : "http://";
	size_t bl = strlen(a.base);
	while (bl > 0 && a.base[bl - 1] == '/')
		bl--;
	printf("%sx-token:%s@%.*s/%s/%s.git\n", proto, tok, (int)(bl - strlen(proto)),
	       a.base + strlen(proto), owner, name);
out:
	free(tok);
	EVP_PKEY_free(key);
	return rc ? fail(rc, &e) : EXIT_OK;
}
