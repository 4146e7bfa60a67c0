// SPDX-License-Identifier: BSD-2-Clause
/*
 * edgeclusterd's API handler (api.c api_handle) with a request built from
 * the input as HTTP text, what http.c hands it after the token check:
 *   METHOD PATH[?QUERY]\n
 *   Header: value\n ...        (Content-Type is what the handler reads)
 *   \n
 *   body
 * Streamed answers (lists) are read to their end.
 */
#include <strings.h>

#include "ec_fixture.h"
#include "fuzz.h"

static enum ec_method method_of(const char *m)
{
	return !strcmp(m, "GET")      ? EC_GET
	       : !strcmp(m, "POST")   ? EC_POST
	       : !strcmp(m, "PUT")    ? EC_PUT
	       : !strcmp(m, "DELETE") ? EC_DELETE
				      : EC_OTHER;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fz_text(data, size), *line, *sp, *q, *eol, *ct = "";
	struct api_req rq = {.query = "", .content_type = "", .peer = "fuzz"};
	struct api_resp rs;
	struct ecd d;

	/* the request line */
	eol = strchr(text, '\n');
	if (eol)
		*eol = 0;
	sp = strchr(text, ' ');
	if (!sp) {
		free(text);
		return 0;
	}
	*sp = 0;
	rq.method_name = text;
	rq.method = method_of(text);
	rq.path = sp + 1;
	if ((q = strchr(sp + 1, '?'))) {
		*q = 0;
		rq.query = q + 1;
	}
	/* headers up to a blank line, then the body (its length: what is left) */
	for (line = eol ? eol + 1 : NULL; line && *line && *line != '\n'; line = eol + 1) {
		if (!(eol = strchr(line, '\n')))
			break;
		*eol = 0;
		if (!strncasecmp(line, "Content-Type:", 13))
			ct = line + 13 + strspn(line + 13, " \t");
	}
	rq.content_type = ct;
	if (line && *line == '\n' && line + 1 < text + size) {
		rq.body = line + 1;
		rq.body_len = size - (size_t)(line + 1 - text);
	}

	fz_ecd_open(&d);
	api_handle(&d, &rq, &rs);
	FZ_ASSERT(rs.code >= 200 && rs.code < 600);
	if (rs.stream) {
		struct xg_buf b = {0};

		while (api_stream_next(rs.stream, &b, 512) > 0)
			;
		api_stream_free(rs.stream);
		free(b.p);
	}
	free(rs.body);
	fz_ecd_close(&d);
	free(text);
	return 0;
}
