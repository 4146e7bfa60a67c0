// SPDX-License-Identifier: BSD-2-Clause
/*
 * edgeclusterd's API handler (api.c api_handle) with a request built from
 * the input as HTTP text, what http.c hands it after the token check:
 *   METHOD PATH[?QUERY]\n
 *   Header: value\n ...        (Content-Type is what the handler reads)
 *   \n
 *   body
 * Streamed answers (lists) are read to their end. Every answer must be
 * well-formed (check_answer).
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
	       : !strcmp(m, "PATCH")  ? EC_PATCH
				      : EC_OTHER;
}

/* A JSON answer parses, a list as much as an object; an error is a Status
 * with the answer's code. */
static void check_answer(const struct api_resp *rs)
{
	json_t *v;

	FZ_ASSERT(rs->body && rs->content_type);
	if (strcmp(rs->content_type, "application/json"))
		return;
	v = json_loads(rs->body, 0, NULL);
	FZ_ASSERT(json_is_object(v));
	if (rs->code >= 400)
		FZ_ASSERT(json_integer_value(json_object_get(v, "code")) == rs->code &&
			  json_string_value(json_object_get(v, "message")));
	json_decref(v);
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
		int more;

		while ((more = api_stream_next(rs.stream, &b, 512)) > 0)
			;
		api_stream_free(rs.stream);
		FZ_ASSERT(more == 0 && !xg_buf_put(&b, "", 1, 0));
		rs.body = b.p;
	}
	check_answer(&rs);
	free(rs.body);
	fz_ecd_close(&d);
	free(text);
	return 0;
}
