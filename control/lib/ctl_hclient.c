// SPDX-License-Identifier: BSD-2-Clause
/* The request headers of a JSON API client; see ctl_hclient.h. */
#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

#include "ctl_hclient.h"

static int add(struct lws *wsi, enum lws_token_indexes t, const char *v, unsigned char **p,
	       unsigned char *end)
{
	return lws_add_http_header_by_token(wsi, t, (const unsigned char *)v, (int)strlen(v), p,
					    end);
}

int ctl_hclient_headers(struct lws *wsi, const char *token, const void *body, size_t body_len,
			unsigned char **p, unsigned char *end)
{
	char auth[512], n[24];

	if (add(wsi, WSI_TOKEN_HTTP_ACCEPT, "application/json", p, end))
		return -1;
	if (token && *token) {
		if (snprintf(auth, sizeof(auth), "Bearer %s", token) >= (int)sizeof(auth) ||
		    add(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, auth, p, end))
			return -1;
	}
	if (!body && !body_len)
		return 0;
	snprintf(n, sizeof(n), "%zu", body_len);
	if (add(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, "application/json", p, end) ||
	    add(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, n, p, end))
		return -1;
	lws_client_http_body_pending(wsi, 1);
	lws_callback_on_writable(wsi);
	return 0;
}
