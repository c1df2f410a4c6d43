/* proc.c: a forked process's signals and name (proc.h). */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include "sandboxd/lib/proc.h"
#include "sandboxd/common/banned.h"

void proc_setup(void (*on_term)(int), const char *name)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (name)
		prctl(PR_SET_NAME, name);
}
