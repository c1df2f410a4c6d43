/* banned.h: functions that invite overflows or hidden state; included last in every .c. */
#ifndef SANDBOXD_BANNED_H
#define SANDBOXD_BANNED_H
#define BANNED(f) sorry_##f##_is_banned
#undef strcpy
#define strcpy(a, b) BANNED(strcpy)
#undef strcat
#define strcat(a, b) BANNED(strcat)
#undef strncpy
#define strncpy(a, b, n) BANNED(strncpy)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(a, b) BANNED(strtok)
#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef atoi
#define atoi(s) BANNED(atoi)
#endif
