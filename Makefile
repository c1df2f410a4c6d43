# sandboxd — one entry point: make, make test, make run, make stop, make unit.
CC      ?= cc
PKGS    := fcgi json-c libgit2 libpq libcurl openssl zlib
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

LIB_SRC := $(filter-out app/bin/%,$(wildcard app/*.c))
LIB_OBJ := $(LIB_SRC:app/%.c=$(B)/obj/%.o) $(B)/obj/migrations.o
BINS    := $(B)/sandboxd $(B)/sandboxctl $(B)/sandboxd-hook $(B)/hooks/pre-receive
UNIT    := $(patsubst tests/unit/%.c,$(B)/unit/%,$(wildcard tests/unit/test_*.c))

all: $(BINS)

$(B)/obj/%.o: app/%.c $(wildcard include/sandboxd/*.h) | $(B)/obj
	$(CC) $(CFLAGS) -c -o $@ $<

# The migrations are compiled into sandboxctl so that it never depends on a path.
$(B)/obj/migrations.c: $(sort $(wildcard sql/[0-9]*.sql)) deploy/embed-sql.sh | $(B)/obj
	sh deploy/embed-sql.sh $(sort $(wildcard sql/[0-9]*.sql)) > $@
$(B)/obj/migrations.o: $(B)/obj/migrations.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libsandboxd.a: $(LIB_OBJ)
	ar rcs $@ $^

$(B)/%: app/bin/%.c $(B)/libsandboxd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libsandboxd.a $(LDLIBS)

# git finds the hook through core.hooksPath, by its name: pre-receive.
$(B)/hooks/pre-receive: $(B)/sandboxd-hook
	mkdir -p $(B)/hooks
	cp $< $@

$(B)/unit/%: tests/unit/%.c $(B)/libsandboxd.a | $(B)/unit
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libsandboxd.a $(LDLIBS) -lcmocka

# The Docker client against the real engine and the runner image (tests/integration/t_docker.sh).
$(B)/docker-smoke: tests/docker/docker_smoke.c $(B)/libsandboxd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libsandboxd.a $(LDLIBS)

$(B)/obj $(B)/unit:
	mkdir -p $@

# Every binary runs, even after a failure, so one run shows every broken test.
unit: $(UNIT)
	@failed=0; for t in $(UNIT); do $$t || failed=$$((failed + 1)); done; \
	if [ $$failed -ne 0 ]; then echo "$$failed unit test binaries failed"; exit 1; fi

test: all unit $(B)/docker-smoke
	bash tests/integration/run.sh

bench: all
	bash bench/run.sh

# The unit and integration suites again, with every binary built with ASan + UBSan; any
# sanitizer report in a log fails the run (tests/integration/run.sh looks for them).
check-sanitize:
	$(MAKE) SANITIZE=1 all unit
	SANDBOXD_BUILD=build-san bash tests/integration/run.sh

run:
	bash deploy/local-stack.sh up

stop:
	bash deploy/local-stack.sh down

clean:
	rm -rf build build-san

.PHONY: all unit test bench check-sanitize run stop clean
.SECONDARY:
