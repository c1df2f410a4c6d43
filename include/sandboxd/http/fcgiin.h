/* fcgiin.h: what libfcgi holds of a request body that it has read from nginx's connection
 * and not yet handed out. libfcgi reads the connection 8 KiB at a time and hands out one
 * record's content at a time: bytes past that record (the next records, the empty one that
 * ends the body) sit in its buffer, where a poll of the connection cannot see them. A
 * reader that must never wait on the client (a push's body, http.h) asks here whether
 * libfcgi can go on without reading the connection.
 *
 * libfcgi keeps that buffer's end in a struct its header does not publish; this module
 * knows its layout (libfcgi 2.4, FCGX_Stream_Data in fcgiapp.c, the same since 1996 and
 * the layout other bindings mirror too) and checks it against the public fields before
 * trusting it. test_fcgiin runs it against the real library. */
#ifndef SANDBOXD_FCGIIN_H
#define SANDBOXD_FCGIIN_H
#include <fcgiapp.h>

/* 1 when libfcgi holds bytes of req's body past the record in hand (the next records,
 * read with it): reading one byte then needs nothing more from the client. 0 when it holds
 * none (the record in hand's padding does not count), -1 when the layout is not the one
 * this module knows (logged once: the caller must assume bytes are held). req's stream
 * must be in its body (FCGX_Accept_r returned). */
int fcgiin_held(const FCGX_Request *req) __attribute__((warn_unused_result));

#endif
