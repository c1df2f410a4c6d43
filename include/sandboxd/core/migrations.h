/* migrations.h: the numbered files of sql/, compiled in by deploy/embed-sql.sh. */
#ifndef SANDBOXD_MIGRATIONS_H
#define SANDBOXD_MIGRATIONS_H

struct migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct migration migrations[];
extern const int migrations_count;

#endif
