/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The client side of the daemons' HTTP/JSON APIs on libwebsockets: the
 * request headers every client of them (the xgate CLI, the benchmarks'
 * probes) sends from its LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER.
 */
#ifndef CTL_HCLIENT_H
#define CTL_HCLIENT_H

#include <stddef.h>

struct lws;

/* Accept: application/json; Authorization: Bearer TOKEN (none when token
 * is NULL or ""); with a body (body_len > 0 or body not NULL) its
 * Content-Type (JSON) and Content-Length, and the body asked to be written
 * from the next LWS_CALLBACK_CLIENT_HTTP_WRITEABLE. p and end as the
 * callback gives them. 0, or -1 when they do not fit. */
int ctl_hclient_headers(struct lws *wsi, const char *token, const void *body, size_t body_len,
			unsigned char **p, unsigned char *end);

#endif
