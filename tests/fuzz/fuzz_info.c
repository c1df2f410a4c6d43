/* fuzz_info.c: what sandboxd reads of a Docker engine's GET /info: its isolation
 * (docker_info_parse_isolation: who runs as root inside, boxuser.h) and its runtimes
 * (docker_info_parse_runtimes: whether a gVisor sandbox may be made there, isolation.h).
 * An engine registered by an operator may be another machine's, behind a network.
 *
 * Input: the runtime asked for, '\n', then the answer (C strings: a NUL ends them; no
 * newline: nothing asked). Invariants: the isolation is "", "userns" or "runsc"; the
 * runtimes' default is a NUL-ended name of at most DOCKER_RUNTIME_MAX bytes with no NUL
 * inside; a runtime is had only when runtimes are listed and one was asked; a refused
 * answer (not a JSON object) leaves everything empty, and is refused by both. */
#include "fuzz.h"
#include "sandboxd/common/err.h"
#include "sandboxd/engine/docker.h"
#include "sandboxd/common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_cstr(data, size), *nl = strchr(in, '\n');
	const char *want = nl ? in : "", *json = nl ? nl + 1 : in;
	struct docker_runtimes rt;
	char iso[8] = "x";
	int a, b;

	if (nl)
		*nl = 0;
	a = docker_info_parse_isolation(json, iso, sizeof(iso));
	b = docker_info_parse_runtimes(json, want, &rt);
	FUZZ_CHECK((a == 0) == (b == 0));
	FUZZ_CHECK(!strcmp(iso, "") || !strcmp(iso, "userns") || !strcmp(iso, "runsc"));
	FUZZ_CHECK(memchr(rt.deflt, 0, sizeof(rt.deflt)) != NULL);
	FUZZ_CHECK(strlen(rt.deflt) <= DOCKER_RUNTIME_MAX);
	FUZZ_CHECK(!rt.has || (rt.listed && *want));
	if (b) {
		FUZZ_CHECK(b == ERR_FAIL && !rt.listed && !rt.has && !rt.deflt[0] && !iso[0]);
	} else if (!strcmp(iso, "runsc")) {
		/* the isolation's "runsc" is the default runtime's name, read the same way */
		FUZZ_CHECK(!strcmp(rt.deflt, "runsc"));
	}
	free(in);
	return 0;
}
