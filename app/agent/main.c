/* main.c: sandboxd-agent. Listens on TCP, forks one handler per connection (at most
 * --max-conns at once, detached execs included: their handler stays to supervise them),
 * and reaps every process that ends up its child: it is a child subreaper and may be
 * PID 1.
 *
 * usage: sandboxd-agent --listen ADDR:PORT --key FILE --dir DIR [--max-conns N]
 *                       [--detach-cap BYTES]
 * PORT 0 picks a free one; the address listened on is printed on stdout either way. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "agent.h"
#include "sandboxd/common/banned.h"

#define MAX_CONNS_LIMIT 256

static void usage(void)
{
	fprintf(stderr, "usage: sandboxd-agent --listen ADDR:PORT --key FILE --dir DIR "
		"[--max-conns N] [--detach-cap BYTES]\n");
	exit(2);
}

static long long num_arg(const char *s, long long lo, long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		usage();
	return v;
}

static int listen_on(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd, one = 1;

	if (!colon || colon - spec >= (long)sizeof(host))
		usage();
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	a.sin_port = htons((uint16_t)num_arg(colon + 1, 0, 65535));
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		usage();
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		fprintf(stderr, "sandboxd-agent: listen on %s: %s\n", spec, strerror(errno));
		exit(1);
	}
	printf("sandboxd-agent: listening on %s:%u\n", host, ntohs(a.sin_port));
	fflush(stdout);
	return fd;
}

static void parse_args(int argc, char **argv, struct agent_cfg *cfg, const char **listen)
{
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--listen"))
			*listen = argv[i + 1];
		else if (!strcmp(argv[i], "--key"))
			cfg->key_path = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			cfg->dir = argv[i + 1];
		else if (!strcmp(argv[i], "--max-conns"))
			cfg->max_conns = (int)num_arg(argv[i + 1], 1, MAX_CONNS_LIMIT);
		else if (!strcmp(argv[i], "--detach-cap"))
			cfg->detach_cap = (uint64_t)num_arg(argv[i + 1], 4096, 1LL << 40);
		else
			usage();
	}
	if (!*listen || !cfg->key_path || !cfg->dir || cfg->key_path[0] != '/' ||
	    cfg->dir[0] != '/')
		usage();
}

/* The detached execs' directory: ours, a real directory, never a link. */
static void make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "sandboxd-agent: mkdir %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		fprintf(stderr, "sandboxd-agent: %s is not a directory of ours\n", dir);
		exit(1);
	}
}

/* Reaps every child that ended; counts the handlers among them. */
static void reap(pid_t *conns, int *n)
{
	pid_t p;

	while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
		for (int i = 0; i < *n; i++)
			if (conns[i] == p) {
				conns[i] = conns[--*n];
				break;
			}
}

/* One accepted connection: a handler, or a refusal when every slot is taken. */
static void dispatch(int lfd, int cfd, int sfd, const struct agent_cfg *cfg, pid_t *conns,
		     int *n)
{
	pid_t p;

	if (*n >= cfg->max_conns) {
		struct conn c = { .fd = cfd, .stream = 1, .cfg = cfg };

		conn_error(&c, ERR_LIMIT, "agent busy: too many connections");
		close(cfd);
		return;
	}
	if ((p = fork()) == 0) {
		close(lfd);
		close(sfd);
		/* Each handler is a subreaper too: its exec's tree stays its descendants. */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		conn_serve(cfd, cfg);
		_exit(0);
	}
	if (p > 0)
		conns[(*n)++] = p;
	close(cfd);
}

int main(int argc, char **argv)
{
	struct agent_cfg cfg = { .max_conns = 32, .detach_cap = 64ULL << 20 };
	const char *listen_spec = NULL;
	pid_t conns[MAX_CONNS_LIMIT];
	int n = 0, lfd, sfd;
	sigset_t s;

	parse_args(argc, argv, &cfg, &listen_spec);
	signal(SIGPIPE, SIG_IGN);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		fprintf(stderr, "sandboxd-agent: not a subreaper: %s\n", strerror(errno));
	make_dir(cfg.dir);
	lfd = listen_on(listen_spec);
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigprocmask(SIG_BLOCK, &s, NULL);
	if ((sfd = signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return 1;
	for (;;) {
		struct pollfd p[2] = { { lfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct signalfd_siginfo si;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 1;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				return 0;
		reap(conns, &n);
		if (p[0].revents & POLLIN) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (cfd >= 0)
				dispatch(lfd, cfd, sfd, &cfg, conns, &n);
			else if (errno == EMFILE || errno == ENFILE)
				usleep(100000);    /* back off rather than spin */
		}
	}
}
