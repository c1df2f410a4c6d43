# sandboxd — one entry point: make, make check, make test, make run, make stop, make unit,
# make fuzz, make valgrind, make install, make uninstall, make deb.
#   make check   before a commit (about 3 min with the runner images built): build, lint,
#                unit tests, fuzz corpora replay, tests/check-links.sh, and t_smoke through
#                a real stack
#   make test    before a push (CI): everything (tests/integration/run.sh --matrix; the
#                layout at the top of run.sh and in tests/integration/schedule)
CC      ?= cc
PKGS    := fcgi json-c libgit2 libpq libcurl openssl zlib libdeflate
WARN    := -Wall -Wextra -Werror -Wvla -Wformat-security -Wmissing-prototypes \
           -Wstrict-prototypes -Wshadow -Wno-unused-parameter
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -Iinclude $(shell pkg-config --cflags $(PKGS)) \
           -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
LDFLAGS += -pie -Wl,-z,relro,-z,now
LDLIBS  := $(shell pkg-config --libs $(PKGS))
B       := build

# SANITIZE=1 builds everything with ASan + UBSan into build-san/.
ifeq ($(SANITIZE),1)
B       := build-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

# The fuzz targets (tests/fuzz/fuzz_<target>.c). FUZZ=1 builds the library and the targets
# with clang, coverage and ASan + UBSan into build-fuzz/, linked with libFuzzer (make fuzz);
# otherwise they link with a replay main that runs them over their corpora (make unit).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FB           := build-fuzz
ifeq ($(FUZZ),1)
B       := $(FB)
CC      := $(FUZZ_CC)
CFLAGS  += -U_FORTIFY_SOURCE -fsanitize=fuzzer-no-link,address,undefined \
           -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
FUZZ_MAIN := -fsanitize=fuzzer
else
FUZZ_MAIN := tests/fuzz/replay.c
endif

# app/ by layer, lowest first (docs/architecture.md): a folder uses only the folders before
# it (deploy/check-layers.sh). bin/ and agent/ are programs on top.
LAYERS  := common lib proto core engine forge git sandbox http holder api daemon
LIB_SRC := $(foreach l,$(LAYERS),$(wildcard app/$(l)/*.c))
HEADERS := $(wildcard include/sandboxd/*/*.h)
AGENT_LIB := app/common/agentproto.c app/common/agentwire.c app/common/sha256.c app/common/err.c app/common/hex.c
LIB_OBJ := $(LIB_SRC:app/%.c=$(B)/obj/%.o) $(B)/obj/core/migrations.o $(B)/obj/sandbox/scripts.o \
           $(B)/obj/api/openapi_doc.o
AGENT   := $(B)/sandboxd-agent
BINS    := $(B)/sandboxd $(B)/sandboxctl $(B)/sandboxd-hook $(B)/hooks/pre-receive \
           $(B)/hooks/post-receive $(B)/sbx
UNIT    := $(patsubst tests/unit/%.c,$(B)/unit/%,$(wildcard tests/unit/test_*.c))
FUZZ_BINS := $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)
# Each target over its committed corpus, counting failures as the unit loop does.
REPLAY  = for t in $(FUZZ_TARGETS); do \
	  $(B)/fuzz/fuzz_$$t tests/fuzz/corpus/$$t || failed=$$((failed + 1)); done

all: $(BINS) $(AGENT)

# sandboxd-agent runs inside sandboxes of any image: static, with musl, from app/agent/
# and the few library files that use nothing but libc (one codec on both ends). Never the
# service library, libpq or curl. Plain musl in the SANITIZE layout too (no ASan there).
AGENT_CC   ?= musl-gcc
AGENT_SRC  := $(wildcard app/agent/*.c) $(AGENT_LIB)
$(B)/sandboxd-agent: $(AGENT_SRC) $(wildcard app/agent/*.h) $(HEADERS)
	@command -v $(AGENT_CC) >/dev/null || { echo "$(AGENT_CC) is missing (deploy/install-deps.sh: musl-tools)"; exit 1; }
	$(AGENT_CC) -static -O2 -g -std=gnu11 $(WARN) -Iinclude -fstack-protector-strong \
	  -Wl,--build-id -o $@ $(AGENT_SRC)

# The unit test that runs the real agent on loopback.
$(B)/unit/test_agent: $(AGENT)

$(B)/obj/%.o: app/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# sandboxd_build_info's version: the package's, from the top of debian/changelog.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
$(B)/obj/api/metrics.o: CFLAGS += -DSANDBOXD_VERSION='"$(VERSION)"'
$(B)/obj/api/metrics.o: debian/changelog

# The migrations are compiled into sandboxctl so that it never depends on a path.
$(B)/obj/core/migrations.c: $(sort $(wildcard sql/[0-9]*.sql)) deploy/embed-sql.sh
	@mkdir -p $(@D)
	sh deploy/embed-sql.sh $(sort $(wildcard sql/[0-9]*.sql)) > $@
$(B)/obj/core/migrations.o: $(B)/obj/core/migrations.c
	$(CC) $(CFLAGS) -c -o $@ $<

# So are the bash programs that run inside sandboxes (app/sandbox/sh/).
$(B)/obj/sandbox/scripts.c: $(wildcard app/sandbox/sh/*.sh) deploy/embed-sh.sh
	@mkdir -p $(@D)
	sh deploy/embed-sh.sh app/sandbox/sh > $@
$(B)/obj/sandbox/scripts.o: $(B)/obj/sandbox/scripts.c
	$(CC) $(CFLAGS) -c -o $@ $<

# And the OpenAPI document, as the JSON GET /api/v3/openapi.json answers (api/openapi.h).
$(B)/obj/api/openapi_doc.c: docs/openapi.yaml deploy/embed-openapi.py
	@mkdir -p $(@D)
	/usr/bin/python3 deploy/embed-openapi.py docs/openapi.yaml > $@.tmp
	mv $@.tmp $@
$(B)/obj/api/openapi_doc.o: $(B)/obj/api/openapi_doc.c include/sandboxd/api/openapi.h
	$(CC) $(CFLAGS) -c -o $@ $<

# Made anew each time: ar would keep a member whose source has moved or gone. Two layers
# may hold files of one name (api/exec.c, sandbox/exec.c): the linker goes by symbols.
$(B)/libsandboxd.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(B)/%: app/bin/%.c $(B)/libsandboxd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libsandboxd.a $(LDLIBS)

# sandboxctl is main() and its table of commands (app/bin/sandboxctl.c) and the commands,
# one file per group in app/bin/ctl/ (as git's builtin/ beside git.c), built with it.
CTL_SRC := $(wildcard app/bin/ctl/*.c)
$(B)/sandboxctl: app/bin/sandboxctl.c $(CTL_SRC) app/bin/ctl/ctl.h $(B)/libsandboxd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CTL_SRC) $(B)/libsandboxd.a $(LDLIBS)

# sbx, the command line for people (man/sbx.1): a client of the REST API, main() in
# app/bin/sbx.c and its files in app/bin/sbx/, on libcurl and json-c alone: never the
# service's library (a client needs neither PostgreSQL nor libgit2).
SBX_SRC  := $(wildcard app/bin/sbx/*.c)
SBX_LIBS := $(shell pkg-config --libs libcurl json-c)
$(B)/sbx: app/bin/sbx.c $(SBX_SRC) app/bin/sbx/sbx.h
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ app/bin/sbx.c $(SBX_SRC) $(SBX_LIBS)

# git finds the hooks through core.hooksPath, by their names; one binary for both.
$(B)/hooks/pre-receive $(B)/hooks/post-receive: $(B)/sandboxd-hook
	mkdir -p $(B)/hooks
	cp $< $@

$(B)/unit/%: tests/unit/%.c $(B)/libsandboxd.a | $(B)/unit
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libsandboxd.a $(LDLIBS) -lcmocka

# The Docker client against the real engine and the runner image (tests/integration/t_docker.sh).
$(B)/docker-smoke: tests/docker/docker_smoke.c $(B)/libsandboxd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libsandboxd.a $(LDLIBS)

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/replay.c $(B)/libsandboxd.a \
		| $(B)/fuzz
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(FUZZ_MAIN) $(B)/libsandboxd.a $(LDLIBS)

# sbx's parser of the server's bytes, without the service's library (as sbx itself).
$(B)/fuzz/fuzz_sbx_ndjson: tests/fuzz/fuzz_sbx_ndjson.c app/bin/sbx/ndjson.c app/bin/sbx/buf.c \
		app/bin/sbx/sbx.h tests/fuzz/fuzz.h tests/fuzz/replay.c | $(B)/fuzz
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< app/bin/sbx/ndjson.c app/bin/sbx/buf.c $(FUZZ_MAIN) \
	  $(SBX_LIBS)

$(B)/obj $(B)/unit $(B)/fuzz:
	mkdir -p $@

# Every binary runs, even after a failure, so one run shows every broken test.
# The fuzz corpora are replayed too, so that an input that once crashed a parser stays fixed.
unit: $(UNIT) $(FUZZ_BINS)
	@failed=0; for t in $(UNIT); do $$t || failed=$$((failed + 1)); done; \
	$(REPLAY); \
	if [ $$failed -ne 0 ]; then echo "$$failed unit test binaries failed"; exit 1; fi

# Every unit test binary and every fuzz target's corpus replay under valgrind: a leak
# (definite or indirect) or a memory error fails the run. Logs: build/valgrind/<name>.log.
# Only the plain build: the sanitizer builds do not run under valgrind. tests/valgrind.supp
# holds suppressions for noise inside libraries, each with its reason.
VALGRIND       ?= valgrind
VALGRIND_FLAGS := --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1 \
                  --suppressions=tests/valgrind.supp -q
valgrind: $(UNIT) $(FUZZ_BINS)
ifneq ($(B),build)
	@echo "make valgrind runs on the plain build only, not with SANITIZE=1 or FUZZ=1"; exit 1
endif
	@command -v $(VALGRIND) >/dev/null || { echo "valgrind is missing (deploy/install-deps.sh)"; exit 1; }
	@mkdir -p $(B)/valgrind; failed=0; \
	for t in $(UNIT) $(FUZZ_BINS); do \
	  n=$${t##*/}; arg=; case $$n in fuzz_*) arg=tests/fuzz/corpus/$${n#fuzz_};; esac; \
	  if $(VALGRIND) $(VALGRIND_FLAGS) --log-file=$(B)/valgrind/$$n.log $$t $$arg \
	      >$(B)/valgrind/$$n.out 2>&1; then \
	    echo "valgrind $$n: no leak, no error"; \
	  else \
	    failed=$$((failed + 1)); cat $(B)/valgrind/$$n.log; tail -n 20 $(B)/valgrind/$$n.out; \
	    echo "valgrind $$n: FAILED (log in $(B)/valgrind/$$n.log)"; \
	  fi; \
	done; \
	if [ $$failed -ne 0 ]; then echo "$$failed binaries failed under valgrind"; exit 1; fi

fuzz-replay: $(FUZZ_BINS)
	@failed=0; $(REPLAY); \
	if [ $$failed -ne 0 ]; then echo "$$failed fuzz corpora failed"; exit 1; fi

# Each target runs FUZZ_SECONDS from its corpus (plus tests/fuzz/<target>.dict and the
# libFuzzer flags in tests/fuzz/<target>.flags, when present). New inputs go to
# build-fuzz/new/<target>/, never to the committed corpus; a crash leaves its input in
# build-fuzz/crash/ and fails the run. Logs: build-fuzz/log/<target>.log.
fuzz:
	$(MAKE) FUZZ=1 $(FUZZ_TARGETS:%=$(FB)/fuzz/fuzz_%)
	@failed=0; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FB)/new/$$t $(FB)/crash $(FB)/log; \
	  dict=; [ ! -f tests/fuzz/$$t.dict ] || dict=-dict=tests/fuzz/$$t.dict; \
	  flags=; [ ! -f tests/fuzz/$$t.flags ] || flags=$$(cat tests/fuzz/$$t.flags); \
	  if $(FB)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	      -print_final_stats=1 -artifact_prefix=$(FB)/crash/$$t- $$dict $$flags \
	      $(FB)/new/$$t tests/fuzz/corpus/$$t >$(FB)/log/$$t.log 2>&1; then \
	    echo "fuzz $$t: $$(sed -n 's/^stat::number_of_executed_units: *//p' \
	      $(FB)/log/$$t.log) executions in $(FUZZ_SECONDS) s, no crash"; \
	  else \
	    failed=$$((failed + 1)); tail -n 60 $(FB)/log/$$t.log; \
	    echo "fuzz $$t: FAILED (input in $(FB)/crash/, log in $(FB)/log/$$t.log)"; \
	  fi; \
	done; \
	if [ $$failed -ne 0 ]; then echo "$$failed fuzz targets failed"; exit 1; fi

# shellcheck over every bash program of the tree: the ones that run inside sandboxes
# (app/sandbox/sh/), the deploy scripts, the tests and the bench.
SHELL_SRC := $(wildcard app/sandbox/sh/*.sh deploy/*.sh tests/integration/*.sh bench/*.sh)
# The code's shape, checked: every int-returning public function is warn_unused_result,
# and no call or include cycle runs between modules.
lint: $(LIB_OBJ)
	@command -v shellcheck >/dev/null || { echo "shellcheck is missing (deploy/install-deps.sh)"; exit 1; }
	shellcheck -s bash -S warning app/sandbox/sh/*.sh
	@echo "shellcheck app/sandbox/sh: clean"
	@for t in $(SANITIZE_SUITES) $(AGENT_OFF_SUITES); do [ -f tests/integration/$$t.sh ] || \
		{ echo "Makefile names a suite that is not there: $$t"; exit 1; }; done
	@for t in tests/integration/t_*.sh; do n=$${t##*/}; n=$${n%.sh}; \
		awk -v n=$$n '$$1 == n && $$2 ~ /^(shared|last|egress|engine|heavy|load)$$/ && $$3 ~ /^[0-9]+$$/ { f = 1 } \
		END { exit !f }' tests/integration/schedule || \
		{ echo "tests/integration/schedule has no valid line for $$n (SUITE CLASS SECONDS)"; exit 1; }; done
	@for n in $$(awk '!/^#/ && NF { print $$1 }' tests/integration/schedule); do \
		[ -f tests/integration/$$n.sh ] || \
		{ echo "tests/integration/schedule names a suite that is not there: $$n"; exit 1; }; done
	sh deploy/check-results.sh $(HEADERS)
	sh deploy/check-layers.sh $(B)/obj '$(LAYERS)'
	@echo "results and layers: clean"
	@# The OpenAPI document and the route table name the same operations (tests/check-openapi.py),
	@# and the check fails on drift both ways (its own test, on scratch copies).
	@/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "python3-yaml is missing (deploy/install-deps.sh)"; exit 1; }
	/usr/bin/python3 tests/check-openapi.py
	bash tests/test-check-openapi.sh
	@# Redocly's lint of the document, its pinned version installed by npm ci (tests/openapi/).
	bash tests/lint-openapi.sh

# The build uses every core (JOBS); make test and make check build with it.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Everything, twice: the normal build, then ASan + UBSan builds of every binary. The matrix
# (README "Two commands"; run.sh --matrix, the layout at the top of run.sh):
#   normal     every integration suite
#   agent-off  AGENT_OFF_SUITES (the suites that run commands and the ones that make
#              sandboxes) with the agent and the warm pool off: Docker exec only, every
#              create cold
#   sanitize   SANITIZE_SUITES on the ASan + UBSan build
#   steps      make unit, make valgrind and the sanitizer build (with its unit run), beside
# The passes run in turn, one stack each, because on 2 cores the suites are CPU-bound
# (IT_LANES_* and IT_PASSES_AT_ONCE=1 spread them where there are more cores). A suite's
# class in tests/integration/schedule says what it may share when they do. The last line is
# "N passed, N failed"; above it every suite, the counts per pass and the skips (a skip the
# schedule does not allow fails under CI=true).
AGENT_OFF_SUITES := t_agent t_sandbox_exec t_exec_stream t_exec_detach t_exec_procs t_secrets t_limits t_hostile_exec t_faults_exec t_sandbox t_reaper t_files_list t_files_raw
test:
	$(MAKE) -j$(JOBS) all lint $(B)/docker-smoke $(UNIT) $(FUZZ_BINS)
	IT_AGENT_OFF_SUITES='$(AGENT_OFF_SUITES)' IT_SANITIZE_SUITES='$(SANITIZE_SUITES)' \
		bash tests/integration/run.sh --matrix

# The quick tier, before every commit: build, lint, unit tests, the fuzz corpora, the docs'
# links (tests/check-links.sh, when there) and one trip through a real stack (t_smoke:
# create at a ref, exec, git push from inside, close).
check:
	$(MAKE) -j$(JOBS) all lint $(UNIT) $(FUZZ_BINS)
	$(MAKE) --no-print-directory unit fuzz-replay
	if [ -f tests/check-links.sh ]; then bash tests/check-links.sh; fi
	bash tests/integration/run.sh t_smoke

bench: all
	bash bench/run.sh
	bash bench/rss.sh

# One worker's resident memory over 10,000 requests of a mix (bench/rss.sh).
bench-rss: all
	bash bench/rss.sh

# The unit tests, the fuzz replays and the suites where the sanitizers find things, again
# with every binary built with ASan + UBSan; any sanitizer report in a log fails the run
# (tests/integration/run.sh looks for them). Chosen, not all (README "Two commands"):
# bytes from outside parsed by our C (HTTP, JSON, tokens, git and LFS, MCP, the agent's
# frames, tar, the page's escaping, the relay between hosts), hostile input, faults and
# load, and the paths every
# other suite also walks (creates, execs, files). Left to the normal build: the suites
# about what the engine, the images, the firewall, nginx, the package tools and the
# examples do, and the forge's plain CRUD, where our C only passes calls on.
SANITIZE_SUITES := t_errors t_auth t_user_sandboxes t_sbx t_hostile_tokens t_giturl t_git t_git_pool t_push_protect t_slow_clients t_lfs t_lfs_guard t_audit \
		   t_mcp t_admin_page t_forge t_review t_secrets t_save_leaks t_isolation t_privilege \
		   t_agent t_sandbox t_sandbox_exec t_exec_stream t_exec_detach t_exec_procs t_exec_caps \
		   t_hostile_exec t_files_raw t_files_list t_docker t_gvisor t_holder t_parked t_load t_metrics \
		   t_reaper t_disk_limit t_faults_docker t_faults_disk t_faults_exec \
		   t_faults_pg t_database t_workers t_hosts
check-sanitize:
	$(MAKE) SANITIZE=1 all unit build-san/docker-smoke
	SANDBOXD_BUILD=build-san bash tests/integration/run.sh $(SANITIZE_SUITES)

# make install [PREFIX=/usr/local] [DESTDIR=…]: where the units and the README say
# (README: Deploying to production). The units' paths are written for PREFIX=/usr/local and
# rewritten here for any other (debian/rules installs with PREFIX=/usr). Files under /etc
# are the operator's once there: installed only when missing, never overwritten.
PREFIX         ?= /usr/local
BINDIR         ?= $(PREFIX)/bin
PKGLIBDIR      ?= $(PREFIX)/lib/sandboxd
DOCDIR         ?= $(PREFIX)/share/doc/sandboxd
MANDIR         ?= $(PREFIX)/share/man
COMPLETIONDIR  ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR     ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
UNITS          := deploy/sandboxd.service deploy/sandboxd-migrate.service
UNIT_PATHS     := -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/usr/local/lib/sandboxd|$(PKGLIBDIR)|g' \
                  -e 's|/usr/local/share/doc/sandboxd|$(DOCDIR)|g'
INSTALLED      := $(BINDIR)/sandboxd $(BINDIR)/sandboxctl $(PKGLIBDIR)/sandboxd-hook \
                  $(PKGLIBDIR)/hooks/pre-receive $(PKGLIBDIR)/hooks/post-receive \
                  $(PKGLIBDIR)/sandboxd-agent $(PKGLIBDIR)/egress.sh $(PKGLIBDIR)/runsc-netstack \
                  $(UNITS:deploy/%=$(SYSTEMDUNITDIR)/%) $(DOCDIR)/README.md \
                  $(DOCDIR)/sandboxd.env.example $(DOCDIR)/nginx-sandboxd.conf \
                  $(MANDIR)/man8/sandboxd.8 $(MANDIR)/man8/sandboxctl.8 \
                  $(BINDIR)/sbx $(MANDIR)/man1/sbx.1 $(COMPLETIONDIR)/sbx

install: $(BINS) $(AGENT)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR)/hooks $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/nginx/sites-available \
	  $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPLETIONDIR)
	install -d -m 0750 $(DESTDIR)$(SYSCONFDIR)/sandboxd
	install -m 0755 $(B)/sandboxd $(B)/sandboxctl $(B)/sbx $(DESTDIR)$(BINDIR)/
	install -m 0755 $(B)/sandboxd-hook $(AGENT) deploy/egress.sh $(DESTDIR)$(PKGLIBDIR)/
	# gVisor's runsc for an engine's daemon.json (docs/operations.md, "gVisor").
	install -m 0755 deploy/runsc-netstack.sh $(DESTDIR)$(PKGLIBDIR)/runsc-netstack
	# git runs the hooks by these names (core.hooksPath); sandboxd-hook reads its argv[0].
	ln -sfn ../sandboxd-hook $(DESTDIR)$(PKGLIBDIR)/hooks/pre-receive
	ln -sfn ../sandboxd-hook $(DESTDIR)$(PKGLIBDIR)/hooks/post-receive
	for u in $(UNITS); do \
	  sed $(UNIT_PATHS) $$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$${u#deploy/} && \
	  chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$${u#deploy/} || exit 1; done
	install -m 0644 README.md deploy/sandboxd.env.example $(DESTDIR)$(DOCDIR)/
	install -m 0644 nginx/sandboxd.conf $(DESTDIR)$(DOCDIR)/nginx-sandboxd.conf
	install -m 0644 man/sandboxd.8 man/sandboxctl.8 $(DESTDIR)$(MANDIR)/man8/
	# sbx, the people's command line: its page and its bash completion (man/sbx.1).
	install -m 0644 man/sbx.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 deploy/sbx.bash-completion $(DESTDIR)$(COMPLETIONDIR)/sbx
	[ -e $(DESTDIR)$(SYSCONFDIR)/sandboxd/sandboxd.env ] || \
	  install -m 0640 deploy/sandboxd.env.example $(DESTDIR)$(SYSCONFDIR)/sandboxd/sandboxd.env
	[ -e $(DESTDIR)$(SYSCONFDIR)/nginx/sites-available/sandboxd.conf ] || \
	  install -m 0644 nginx/sandboxd.conf $(DESTDIR)$(SYSCONFDIR)/nginx/sites-available/sandboxd.conf

# The Debian package from this tree, built in a copy of it, with lintian: build/deb/*.deb.
deb:
	bash deploy/build-deb.sh $(B)/deb --lintian

# Everything install put outside /etc; the settings and the nginx site stay.
uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	-rmdir $(DESTDIR)$(PKGLIBDIR)/hooks $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(DOCDIR) 2>/dev/null

run:
	bash deploy/local-stack.sh up

stop:
	bash deploy/local-stack.sh down

clean:
	rm -rf build build-san $(FB)

.PHONY: all lint unit valgrind fuzz fuzz-replay test check bench bench-rss check-sanitize run stop clean \
        install uninstall deb
.SECONDARY:
