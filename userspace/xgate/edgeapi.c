// SPDX-License-Identifier: BSD-2-Clause
/*
 * The API client of the daemons' commands (`xgate mission|cluster` for
 * edgeclusterd, `xgate app|session|node` for fornaxd): one blocking
 * request at a time over libwebsockets' HTTP client. lws rather than a
 * hand-written socket client because the same code then does https with
 * certificate and host name verification against --ca (or the system CAs),
 * chunked responses and keep-alive framing, and edgeclusterd's uplink speaks
 * WebSocket through the same library.
 *
 * Server: --server URL, else $<PREFIX>_SERVER, else the daemon's default
 * (edgeclusterd: $XGATE_SERVER, http://127.0.0.1:7443; fornaxd:
 * $XGATE_FORNAX_SERVER, http://127.0.0.1:8470). Token: --token T,
 * --token-file F, $<PREFIX>_TOKEN, $<PREFIX>_TOKEN_FILE (first found).
 * CA: --ca FILE or $XGATE_CA.
 */
#include <errno.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "cli.h"
#include "ctl_hclient.h"
#include "ctl_url.h"

#define RESP_MAX   (64u << 20)
#define CHUNK	   (16u << 10)
#define DEADLINE_S 30

struct call {
	const struct ecc *e;
	const char *method;
	const unsigned char *body; /* LWS_PRE bytes before it are ours */
	size_t body_len, sent;
	int status;
	struct xg_buf resp;
	bool done, failed;
	char err[256];
};

static int parse_server(struct ecc *e, const char *url)
{
	struct ctl_url u;
	char err[600];

	snprintf(e->server, sizeof(e->server), "%s", url);
	if (ctl_url_parse(url, CTL_SCHEMES_HTTP, &u, err, sizeof(err)))
		return xg_fail(XG_EUSAGE, "server %s", err);
	if (strlen(u.host) >= sizeof(e->host))
		return xg_fail(XG_EUSAGE, "server '%s': host name too long", url);
	e->tls = u.tls;
	snprintf(e->host, sizeof(e->host), "%s", u.host);
	e->port = u.port;
	/* a path prefix (a reverse proxy's) goes in front of every API path */
	snprintf(e->base, sizeof(e->base), "%s", u.has_path ? u.path : "");
	while (*e->base && e->base[strlen(e->base) - 1] == '/')
		e->base[strlen(e->base) - 1] = 0;
	return XG_OK;
}

static int read_token_file(struct ecc *e, const char *path)
{
	char line[sizeof(e->token)];
	FILE *f = fopen(path, "r");
	int rc = XG_EUSAGE;

	if (!f)
		return xg_fail(errno == ENOENT	 ? XG_ENOTFOUND
			       : errno == EACCES ? XG_EPERM
						 : XG_EFAIL,
			       "token file %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *t = line + strspn(line, " \t");

		t[strcspn(t, " \t\r\n#")] = 0;
		if (*t) {
			snprintf(e->token, sizeof(e->token), "%s", t);
			rc = XG_OK;
			break;
		}
	}
	fclose(f);
	memset(line, 0, sizeof(line));
	return rc ? xg_fail(rc, "token file %s holds no token", path) : XG_OK;
}

const struct ecc_daemon ecc_edgeclusterd = {"edgeclusterd", "XGATE", "http://127.0.0.1:7443"};
const struct ecc_daemon ecc_fornaxd = {"fornaxd", "XGATE_FORNAX", "http://127.0.0.1:8470"};

static const char *env(const struct ecc_daemon *d, const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%s", d->env, what);
	return getenv(name);
}

int ecc_setup(struct ecc *e, struct args *a, const struct ecc_daemon *d)
{
	const char *server = env(d, "SERVER"), *token = NULL, *tfile = NULL;
	int kept = 0, rc;

	memset(e, 0, sizeof(*e));
	e->d = d;
	e->ca = getenv("XGATE_CA");
	for (int i = 0; i < a->argc; i++) {
		const char *s = a->argv[i];
		const char **dst = !strcmp(s, "--server")	? &server
				   : !strcmp(s, "--token")	? &token
				   : !strcmp(s, "--token-file") ? &tfile
				   : !strcmp(s, "--ca")		? &e->ca
								: NULL;

		if (!dst) {
			a->argv[kept++] = a->argv[i];
			continue;
		}
		if (++i >= a->argc)
			return xg_fail(XG_EUSAGE, "'%s' needs a value", s);
		*dst = a->argv[i];
	}
	a->argc = kept;
	rc = parse_server(e, server && *server ? server : d->server);
	if (rc)
		return rc;
	if (token)
		snprintf(e->token, sizeof(e->token), "%s", token);
	else if (tfile)
		return read_token_file(e, tfile);
	else if ((token = env(d, "TOKEN")) && *token)
		snprintf(e->token, sizeof(e->token), "%s", token);
	else if ((tfile = env(d, "TOKEN_FILE")) && *tfile)
		return read_token_file(e, tfile);
	return XG_OK;
}

static void finish(struct lws *wsi, struct call *k)
{
	k->done = true;
	lws_cancel_service(lws_get_context(wsi));
}

static int cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct call *k = lws_context_user(lws_get_context(wsi));

	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		snprintf(k->err, sizeof(k->err), "%s", in ? (const char *)in : "connection failed");
		k->failed = true;
		finish(wsi, k);
		return 0;
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
		unsigned char **p = in;

		return ctl_hclient_headers(wsi, k->e->token, k->body, k->body_len, p, *p + len);
	}
	case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE: {
		size_t n = k->body_len - k->sent > CHUNK ? CHUNK : k->body_len - k->sent;
		bool final = k->sent + n == k->body_len;

		if (!k->body)
			return 0;
		if (lws_write(wsi, (unsigned char *)k->body + k->sent, n,
			      final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)n)
			return -1;
		k->sent += n;
		if (final)
			lws_client_http_body_pending(wsi, 0);
		else
			lws_callback_on_writable(wsi);
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
		k->status = (int)lws_http_client_http_response(wsi);
		return 0;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
		if (xg_buf_put(&k->resp, in, len, RESP_MAX)) {
			snprintf(k->err, sizeof(k->err), "answer larger than %u bytes", RESP_MAX);
			k->failed = true;
			return -1;
		}
		return 0;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
		char buf[LWS_PRE + 4096], *px = buf + LWS_PRE;
		int lenx = sizeof(buf) - LWS_PRE;

		return lws_http_client_read(wsi, &px, &lenx) < 0 ? -1 : 0;
	}
	case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
		finish(wsi, k);
		return 0;
	case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
		if (!k->status && !k->failed) {
			snprintf(k->err, sizeof(k->err), "the connection closed without an answer");
			k->failed = true;
		}
		finish(wsi, k);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {"xgate-api", cb, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static struct call *deadline_call;
static void on_deadline(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	snprintf(deadline_call->err, sizeof(deadline_call->err), "no answer within %d s",
		 DEADLINE_S);
	deadline_call->failed = deadline_call->done = true;
}

int ecc_call(const struct ecc *e, const char *method, const char *path, const char *body,
	     int *status, json_t **out)
{
	struct lws_context_creation_info info;
	struct lws_client_connect_info ci;
	struct call k = {.e = e, .method = method};
	lws_sorted_usec_list_t deadline;
	struct lws_context *ctx;
	unsigned char *buf = NULL;
	char full[2048];
	int rc = XG_OK;

	*out = NULL;
	*status = 0;
	if (body) {
		k.body_len = strlen(body);
		buf = malloc(LWS_PRE + k.body_len + 1);
		if (!buf)
			return xg_fail(XG_EFAIL, "out of memory");
		memcpy(buf + LWS_PRE, body, k.body_len);
		k.body = buf + LWS_PRE;
	}
	lws_set_log_level(0, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.user = &k;
	info.connect_timeout_secs = 10;
	info.timeout_secs = DEADLINE_S;
	info.fd_limit_per_thread = 16;
	if (e->tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.client_ssl_ca_filepath = e->ca;
	}
	ctx = lws_create_context(&info);
	if (!ctx) {
		free(buf);
		return xg_fail(XG_EFAIL, "cannot set up the HTTP client%s",
			       e->ca ? " (is the --ca file a PEM certificate?)" : "");
	}
	snprintf(full, sizeof(full), "%s%s", e->base, path);
	memset(&ci, 0, sizeof(ci));
	ci.context = ctx;
	ci.address = e->host;
	ci.port = e->port;
	ci.path = full;
	ci.host = e->host;
	ci.origin = e->host;
	ci.method = method;
	ci.protocol = protocols[0].name;
	ci.alpn = "http/1.1";
	ci.ssl_connection = e->tls ? LCCSCF_USE_SSL : 0;
	deadline_call = &k;
	memset(&deadline, 0, sizeof(deadline));
	lws_sul_schedule(ctx, 0, &deadline, on_deadline, (lws_usec_t)DEADLINE_S * LWS_US_PER_SEC);
	if (!lws_client_connect_via_info(&ci) && !k.failed) {
		k.failed = true;
		snprintf(k.err, sizeof(k.err), "cannot start the connection");
	}
	while (!k.done && !k.failed && lws_service(ctx, 0) >= 0)
		;
	lws_sul_cancel(&deadline);
	lws_context_destroy(ctx);
	free(buf);
	if (k.failed || !k.status) {
		rc = xg_fail(XG_EFAIL, "cannot reach %s at %s: %s (set --server or $%s_SERVER)",
			     e->d->name, e->server, k.err[0] ? k.err : "no answer", e->d->env);
	} else {
		*status = k.status;
		*out = k.resp.p ? json_loads(k.resp.p, 0, NULL) : NULL;
		if (!*out && k.status < 300)
			rc = xg_fail(XG_EFAIL, "%s at %s sent an answer that is not JSON",
				     e->d->name, e->server);
	}
	xg_buf_free(&k.resp);
	return rc;
}

int ecc_fail(int status, json_t *resp)
{
	json_t *m = json_object_get(resp, "message");
	int code = status == 401 || status == 403  ? XG_EPERM
		   : status == 404		   ? XG_ENOTFOUND
		   : status == 409		   ? XG_EEXIST
		   : status >= 400 && status < 500 ? XG_EUSAGE
						   : XG_EFAIL;

	/* the server's message names the field; it goes out as it is */
	if (json_is_string(m))
		xg_err("%s", json_string_value(m));
	else
		xg_err("the server answered HTTP %d", status);
	if (status == 401)
		fprintf(stderr,
			"(give a token with --token or --token-file, or in the environment: "
			"see `xgate help`)\n");
	return code;
}

/* Query values: percent-encode everything but unreserved characters. */
void ecc_urlencode(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = 0;
}

const char *ecc_path(char *path, size_t len, const char *base, const char *name)
{
	char enc[700];

	if (!name) {
		snprintf(path, len, "%s", base);
		return path;
	}
	ecc_urlencode(name, enc, sizeof(enc));
	snprintf(path, len, "%s/%s", base, enc);
	return path;
}

int ecc_get(const struct ecc *e, const char *path, json_t **res)
{
	int status, rc = ecc_call(e, "GET", path, NULL, &status, res);

	if (!rc && status != 200) {
		rc = ecc_fail(status, *res);
		json_decref(*res);
		*res = NULL;
	}
	return rc;
}

void ecc_print(struct cli *c, json_t *res, bool one, json_t *(*row)(json_t *o),
	       const char *const *cols, const char *const *keys)
{
	json_t *rows, *o;
	size_t i;

	if (c->json) {
		out_json(res);
		return;
	}
	rows = json_array();
	if (one)
		json_array_append_new(rows, row(res));
	else
		json_array_foreach(json_object_get(res, "items"), i, o)
		    json_array_append_new(rows, row(o));
	out_rows(c, rows, cols, keys);
}
