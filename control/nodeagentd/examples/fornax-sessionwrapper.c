// SPDX-License-Identifier: BSD-2-Clause
/*
 * fornax-sessionwrapper: runs an application that does not speak the
 * session service, and speaks it for it (the original's sessionwrapper).
 *   fornax-sessionwrapper --port N -- COMMAND [ARGS...]
 * The application runs as the wrapper's child. A session is ready once
 * 127.0.0.1:N accepts a connection; its data is written to the file
 * $FORNAX_SESSION_DATA_FILE when that is set; a close is answered at
 * once. The wrapper ends with its application (exit status passed on).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "svc_lines.h"

struct wrap {
	int port;
	char pending[256]; /* a session waiting for the port */
	struct svc_conn svc;
};

static bool port_accepts(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (fd >= 0)
		close(fd);
	return ok;
}

static void save_data(const char *b64)
{
	const char *path = getenv("FORNAX_SESSION_DATA_FILE");
	static char data[16 * 1024 + 1];
	size_t n;
	FILE *f;

	if (!path || b64_decode(b64 ? b64 : "", data, sizeof(data), &n))
		return;
	f = fopen(path, "we");
	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static void on_svc(struct svc_conn *c, json_t *m, void *arg)
{
	struct wrap *w = arg;
	const char *op = json_string_value(json_object_get(m, "op"));
	const char *id = json_string_value(json_object_get(m, "session"));

	if (!op)
		return;
	if (!strcmp(op, "open") && id) {
		save_data(json_string_value(json_object_get(m, "data")));
		snprintf(w->pending, sizeof(w->pending), "%s", id);
	} else if (!strcmp(op, "close") && id) {
		if (!strcmp(w->pending, id))
			w->pending[0] = 0;
		svc_send(c, json_pack("{s:s,s:s}", "op", "closed", "session", id));
	} else if (!strcmp(op, "ping")) {
		svc_send(c,
			 json_pack("{s:s,s:O?}", "op", "pong", "seq", json_object_get(m, "seq")));
	}
}

int main(int argc, char **argv)
{
	const char *sock = getenv("FORNAX_SESSION_SOCKET");
	struct wrap w = {.port = 0, .svc = {.fd = -1}};
	int i, sfd, status;
	sigset_t chld;
	pid_t app;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--port") && i + 1 < argc)
			w.port = atoi(argv[++i]);
	if (w.port < 1 || w.port > 65535 || i + 1 >= argc || !sock) {
		fprintf(stderr, "usage: fornax-sessionwrapper --port N -- COMMAND [ARGS...]\n"
				"(FORNAX_SESSION_SOCKET set by the node)\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = svc_listen(sock)) < 0) {
		fprintf(stderr, "fornax-sessionwrapper: %s: %s\n", sock, strerror(errno));
		return 1;
	}
	app = fork();
	if (app == 0) {
		close(sfd);
		/* the socket is the wrapper's: an app that looked for it would take it */
		unsetenv("FORNAX_SESSION_SOCKET");
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "fornax-sessionwrapper: %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	sigemptyset(&chld);
	for (;;) {
		struct pollfd p[2] = {{sfd, POLLIN, 0}, {w.svc.fd, POLLIN, 0}};
		pid_t r = waitpid(app, &status, WNOHANG);

		if (r == app)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		/* a short poll while a session waits for the port, else the app's exit */
		poll(p, 2, w.pending[0] ? 5 : 200);
		if (p[0].revents & POLLIN) {
			int c = accept4(sfd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				if (w.svc.fd >= 0)
					close(w.svc.fd);
				w.svc.fd = c;
				w.svc.len = 0;
			}
		}
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) && svc_read(&w.svc, on_svc, &w)) {
			close(w.svc.fd);
			w.svc.fd = -1;
		}
		if (w.pending[0] && port_accepts(w.port)) {
			svc_send(&w.svc,
				 json_pack("{s:s,s:s}", "op", "ready", "session", w.pending));
			w.pending[0] = 0;
		}
	}
}
