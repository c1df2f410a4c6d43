/* addrlist.h: lists of IP addresses and networks, as settings give them
 * ("127.0.0.1, 10.0.0.0/8, ::1"): entries separated by commas and spaces, each an IPv4 or
 * IPv6 address with an optional /prefix. Pure: no I/O. */
#ifndef SANDBOXD_ADDRLIST_H
#define SANDBOXD_ADDRLIST_H
#include "sandboxd/common/err.h"

/* 0 when every entry of list is an address or network (an empty list is valid), else
 * ERR_INVALID with e naming the entry. */
int addrlist_check(const char *list, struct err *e) __attribute__((warn_unused_result));
/* 1 when addr (an address literal, as REMOTE_ADDR holds it) is in an entry of list, else 0
 * (also for a NULL or malformed addr, and for entries that are malformed). An IPv4 address
 * mapped into IPv6 (::ffff:a.b.c.d) matches as the IPv4 address. */
int addrlist_match(const char *list, const char *addr) __attribute__((warn_unused_result));

#endif
