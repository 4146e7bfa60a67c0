// SPDX-License-Identifier: BSD-2-Clause
/*
 * The local control socket (`xgate gw ...`): a unix stream socket, mode
 * 0600, one request line in, one JSON document out. Requests:
 *   status | peers | routes | subnet add VNI CIDR | subnet del VNI CIDR
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "aead.h"
#include "gwd.h"

int gwd_ctl_open(struct gwd *g)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(g->ctl_path) >= sizeof(sa.sun_path)) {
		gwd_log(g, "control socket path too long: %s", g->ctl_path);
		return -1;
	}
	strcpy(sa.sun_path, g->ctl_path);
	unlink(g->ctl_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(g->ctl_path, 0600) ||
	    listen(fd, 64)) {
		gwd_log(g, "control socket %s: %s", g->ctl_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	g->ctl_fd = fd;
	return 0;
}

static const char *state_name(enum peer_state s)
{
	return s == PEER_UP ? "up" : s == PEER_CONNECTING ? "connecting" : "down";
}

static json_t *ipstr(uint32_t ip_be)
{
	char b[16];

	return json_string(inet_ntop(AF_INET, &ip_be, b, sizeof(b)));
}

static json_t *prefix(const struct rt_key *k)
{
	char b[16], out[24];

	inet_ntop(AF_INET, &k->ip_be, b, sizeof(b));
	snprintf(out, sizeof(out), "%s/%u", b, k->plen);
	return json_string(out);
}

static json_t *peers_json(struct gwd *g, uint64_t now)
{
	json_t *a = json_array();

	for (int i = 0; i < g->n_peers; i++) {
		struct peer *p = &g->peers[i];
		struct xg_gw_pstat ps;
		json_t *o;
		int routes = 0;

		gwd_dp_pstats(g, i, &ps);
		for (int j = 0; j < g->routes.n; j++)
			routes += !strcmp(g->routes.r[j].origin, p->conf->name) &&
				  rt_forwarding(&g->routes.r[j]);
		o = json_pack("{s:s,s:s,s:o,s:o,s:I,s:I,s:I,s:I}", "name", p->conf->name, "state",
			      state_name(p->state), "last_handshake_s_ago",
			      p->last_handshake_ms
				  ? json_integer((json_int_t)(now - p->last_handshake_ms) / 1000)
				  : json_null(),
			      "public", p->public_ip_be ? ipstr(p->public_ip_be) : json_null(),
			      "routes", (json_int_t)routes, "rx_frames",
			      (json_int_t)__atomic_load_n(&p->rx_frames, __ATOMIC_RELAXED),
			      "refused", (json_int_t)p->refused, "port",
			      (json_int_t)ntohs(p->public_port_be));
		/* data-plane counters (zero without a data plane) */
		json_object_set_new(o, "tx_packets", json_integer((json_int_t)ps.tx_packets));
		json_object_set_new(o, "rx_packets", json_integer((json_int_t)ps.rx_packets));
		json_object_set_new(o, "rx_dropped", json_integer((json_int_t)ps.rx_dropped));
		json_object_set_new(o, "key_age_s",
				    p->last_rekey_ms
					? json_integer((json_int_t)(now - p->last_rekey_ms) / 1000)
					: json_null());
		/* the tunnel: the configured mode, and while up what protects it */
		json_object_set_new(
		    o, "mode", json_string(p->conf->mode == GW_MODE_ENCRYPT ? "encrypt" : "auth"));
		json_object_set_new(o, "cipher",
				    p->state != PEER_UP ? json_null()
				    : p->conf->mode == GW_MODE_AUTH
					? json_string("siphash-2-4")
					: json_string(xgt_cipher_name(p->cipher)));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *routes_json(struct gwd *g, uint64_t now)
{
	static const char *const st[] = {"active", "stale", "withdrawn"};
	json_t *a = json_array();

	for (int i = 0; i < g->n_own; i++)
		if (!g->own[i].withdrawn)
			json_array_append_new(a,
					      json_pack("{s:I,s:o,s:s,s:I,s:s,s:I}", "vni",
							(json_int_t)g->own[i].key.vni, "prefix",
							prefix(&g->own[i].key), "origin", "local",
							"version", (json_int_t)g->own[i].version,
							"state", "active", "age_s", (json_int_t)0));
	for (int i = 0; i < g->routes.n; i++) {
		struct route *r = &g->routes.r[i];

		if (!rt_forwarding(r))
			continue;
		json_array_append_new(
		    a, json_pack("{s:I,s:o,s:s,s:I,s:s,s:I}", "vni", (json_int_t)r->key.vni,
				 "prefix", prefix(&r->key), "origin", r->origin, "version",
				 (json_int_t)r->version, "state", st[r->state], "age_s",
				 (json_int_t)(now - r->since_ms) / 1000));
	}
	return a;
}

static json_t *handle(struct gwd *g, char *line)
{
	uint64_t now = gwd_now_ms();
	char *argv[6], *save = NULL;
	int argc = 0;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && argc < 6;
	     t = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = t;
	if (!argc)
		return json_pack("{s:s}", "error", "empty request");
	if (!strcmp(argv[0], "status")) {
		int up = 0;

		for (int i = 0; i < g->n_peers; i++)
			up += g->peers[i].state == PEER_UP;
		return json_pack("{s:s,s:s,s:o,s:i,s:i,s:i}", "name", g->conf.name, "cluster",
				 g->conf.cluster, "public",
				 ipstr(g->conf.public_addr.sin_addr.s_addr), "peers", g->n_peers,
				 "peers_up", up, "routes", g->routes.n);
	}
	if (!strcmp(argv[0], "peers"))
		return json_pack("{s:o}", "peers", peers_json(g, now));
	if (!strcmp(argv[0], "routes"))
		return json_pack("{s:o}", "routes", routes_json(g, now));
	if (!strcmp(argv[0], "subnet") && argc == 4 &&
	    (!strcmp(argv[1], "add") || !strcmp(argv[1], "del"))) {
		struct rt_key k = {0};
		char err[160], *slash = strchr(argv[3], '/'), *end;
		unsigned long vni = strtoul(argv[2], &end, 10), plen;
		struct in_addr a;

		if (*end || !vni || vni > 0xffffff)
			return json_pack("{s:s}", "error", "VNI must be 1-16777215");
		if (!slash)
			return json_pack("{s:s}", "error", "expected A.B.C.D/LEN");
		*slash = 0;
		plen = strtoul(slash + 1, &end, 10);
		if (inet_pton(AF_INET, argv[3], &a) != 1 || *end || plen > 32)
			return json_pack("{s:s}", "error", "expected A.B.C.D/LEN");
		k.vni = (uint32_t)vni;
		k.ip_be = a.s_addr;
		k.plen = (uint8_t)plen;
		int rc = gwd_own_set(g, &k, !strcmp(argv[1], "add"), err, sizeof(err));

		if (rc)
			return json_pack("{s:s,s:s}", "error", err, "code",
					 rc == -EEXIST	 ? "exists"
					 : rc == -ENOENT ? "not_found"
					 : rc == -EINVAL ? "invalid"
							 : "failed");
		return json_pack("{s:b}", "ok", 1);
	}
	return json_pack("{s:s}", "error",
			 "unknown request: status, peers, routes, subnet add|del VNI CIDR");
}

static void client_close(struct gwd *g, int i)
{
	struct ctl_client *c = &g->ctl[i];

	close(c->fd);
	free(c->out);
	*c = g->ctl[--g->n_ctl];
}

/* The request is complete: the reply replaces it. */
static void client_answer(struct gwd *g, struct ctl_client *c, const char *error)
{
	json_t *res;

	if (error) {
		res = json_pack("{s:s}", "error", error);
	} else {
		c->in[c->len] = 0;
		pthread_mutex_lock(&g->lock);
		res = handle(g, c->in);
		pthread_mutex_unlock(&g->lock);
	}
	c->out = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER);
	c->out_len = c->out ? strlen(c->out) : 0;
	c->out_off = 0;
	json_decref(res);
}

/* Reads what the client sent; the request ends at a newline or when the
 * client shuts its side down. One longer than GWD_CTL_REQ_MAX is read to
 * its end all the same (closing a socket with unread data resets it, and
 * the client would not see the error), then refused. Returns -1 when the
 * client is to be closed. */
static int client_read(struct gwd *g, struct ctl_client *c)
{
	ssize_t n = read(c->fd, c->in + c->len, GWD_CTL_REQ_MAX - c->len);
	char *nl;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	nl = n ? memchr(c->in + c->len, '\n', (size_t)n) : NULL;
	if (n == 0 && !c->len && !c->too_long)
		return -1;
	if (n == 0 || nl) {
		char e[64];

		if (nl)
			c->len = (size_t)(nl - c->in);
		snprintf(e, sizeof(e), "request longer than %d bytes", GWD_CTL_REQ_MAX);
		client_answer(g, c, c->too_long ? e : NULL);
		return 0;
	}
	c->len += (size_t)n;
	if (c->len == GWD_CTL_REQ_MAX) {
		c->too_long = true;
		c->len = 0; /* the rest is read over it */
	}
	return 0;
}

/* Writes what the socket takes; -1 when done or failed (close it). */
static int client_write(struct gwd *g, struct ctl_client *c)
{
	ssize_t n;

	if (!c->out)
		return -1;
	n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < 0) {
		gwd_log(g, "control: reply lost: %s", strerror(errno));
		return -1;
	}
	c->out_off += (size_t)n;
	return c->out_off == c->out_len ? -1 : 0;
}

/* The main loop's wait (up to 200 ms): signals, new control clients and
 * every client's request and reply, none of them blocking. A client gets
 * GWD_CTL_TIMEOUT_MS for its request and reply together. */
void gwd_ctl_serve(struct gwd *g)
{
	struct pollfd pfd[GWD_CTL_CLIENTS + 2];
	struct signalfd_siginfo si;
	uint64_t now;
	int n = 0;

	pfd[n++] = (struct pollfd){.fd = g->sig_fd, .events = POLLIN};
	/* full: new clients wait in the listen queue */
	pfd[n++] =
	    (struct pollfd){.fd = g->n_ctl < GWD_CTL_CLIENTS ? g->ctl_fd : -1, .events = POLLIN};
	for (int i = 0; i < g->n_ctl; i++)
		pfd[n++] =
		    (struct pollfd){.fd = g->ctl[i].fd, .events = g->ctl[i].out ? POLLOUT : POLLIN};
	if (poll(pfd, (nfds_t)n, 200) < 0)
		return;
	if (pfd[0].revents && read(g->sig_fd, &si, sizeof(si)) > 0)
		g->stop = 1;
	now = gwd_now_ms();
	/* backwards: closing a client moves the last one into its place */
	for (int i = g->n_ctl - 1; i >= 0; i--) {
		struct ctl_client *c = &g->ctl[i];
		short re = pfd[2 + i].revents;
		int rc = 0;

		if (re && c->out)
			rc = client_write(g, c);
		else if (re)
			rc = client_read(g, c);
		if (!rc && c->out && !c->out_off && client_write(g, c))
			rc = -1; /* answered just now: most replies fit at once */
		if (!rc && now >= c->deadline_ms) {
			gwd_log(g, "control: client closed, %s within %ums",
				c->out ? "reply not taken" : "no request", GWD_CTL_TIMEOUT_MS);
			rc = -1;
		}
		if (rc)
			client_close(g, i);
	}
	/* every client waiting, while there is room */
	while (pfd[1].fd >= 0 && pfd[1].revents && g->n_ctl < GWD_CTL_CLIENTS) {
		int fd = accept4(g->ctl_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			break;
		g->ctl[g->n_ctl++] =
		    (struct ctl_client){.fd = fd, .deadline_ms = now + GWD_CTL_TIMEOUT_MS};
	}
}
