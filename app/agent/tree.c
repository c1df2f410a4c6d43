/* tree.c: the descendants of this process, found in /proc. Each handler is a child
 * subreaper, so a process its exec started stays its descendant even after setsid or a
 * double fork: the orphan is re-parented to the handler, not to PID 1. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"
#include "sandboxd/common/banned.h"

struct proc {
	pid_t pid, ppid;
	int alive;                     /* not a zombie */
};

/* pid's parent and state from /proc/<pid>/stat: 0, or -1 when it is gone. The command
 * name may hold ')' and spaces: the fields after it start after the last ')'. */
static int proc_stat(pid_t pid, struct proc *p)
{
	char path[64], buf[512], *q;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (!(q = strrchr(buf, ')')) || q[1] != ' ' || !q[2] || q[3] != ' ')
		return -1;
	p->pid = pid;
	p->alive = q[2] != 'Z' && q[2] != 'X';
	p->ppid = (pid_t)strtol(q + 4, NULL, 10);
	return 0;
}

/* Every process in /proc into *out (grown as needed): its count, or -1. */
static int proc_list(struct proc **out, size_t *cap)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (n == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			struct proc *p = realloc(*out, c * sizeof(*p));

			if (!p)
				break;
			*out = p;
			*cap = c;
		}
		if (proc_stat((pid_t)pid, &(*out)[n]) == 0)
			n++;
	}
	closedir(d);
	return (int)n;
}

int tree_signal(int sig)
{
	struct proc *ps = NULL;
	size_t cap = 0;
	int n = proc_list(&ps, &cap), alive = 0;
	char *mark;

	if (n <= 0 || !(mark = calloc((size_t)n, 1))) {
		free(ps);
		return n < 0 ? 1 : 0;     /* unknown: say alive, so the caller retries */
	}
	/* Marks spread from this process to its children until nothing changes: a parent
	 * listed after its child takes another pass. */
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = 0; i < n; i++) {
			if (mark[i])
				continue;
			int parent = ps[i].ppid == getpid();

			for (int j = 0; !parent && j < n; j++)
				parent = mark[j] && ps[j].pid == ps[i].ppid;
			if (parent)
				mark[i] = changed = 1;
		}
	}
	for (int i = 0; i < n; i++) {
		if (!mark[i])
			continue;
		if (sig)
			kill(ps[i].pid, sig);
		alive += ps[i].alive;
	}
	free(mark);
	free(ps);
	return alive;
}
