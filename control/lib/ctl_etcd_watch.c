// SPDX-License-Identifier: BSD-2-Clause
/*
 * The watch half of the etcd client (ctl_etcd.h): a list-and-watch on a
 * prefix over the gateway's /v3/watch, a long response of newline-separated
 * {"result": WatchResponse} objects, on curl's multi interface so that the
 * owner's loop is never blocked by the stream.
 *
 * The revision delivered last is the resume point: a broken stream is
 * reopened (on the next endpoint if this one is gone, after a backoff) at
 * that revision + 1, so nothing is missed and nothing comes twice. When
 * etcd has compacted past it the watch is cancelled with compact_revision:
 * then the events in between are unreadable and the only safe thing is a
 * full read, handed over as a snapshot, and a new watch from the read's
 * revision + 1 (etcd #8668: starting from the compact revision instead can
 * miss events).
 *
 * That read (the first, and the one after a compaction) rides on the same
 * multi handle as the stream, so it never holds the owner's loop: a member
 * that is paused, or has no quorum, would otherwise hold it for up to
 * Timeout per member exactly when the owner should keep answering. The
 * read is started by a poll, its answer handed over by a later one; one
 * that fails is tried again on the next endpoint after the stream's
 * backoff. Nothing is streamed until it answered, and the stream starts
 * at its revision + 1, so nothing is missed or seen twice across it.
 *
 * curl runs on its socket interface: its sockets are kept in an epoll set
 * of the watch's own, and its timer as a deadline. The epoll fd is readable
 * whenever one of them is, so an event loop (lws's, through ctl_fdpoll)
 * polls that one fd and the watch is stepped as data arrives, not on a
 * tick; a plain loop calls ctl_etcd_watch_poll with a timeout, which waits
 * on the same set.
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "ctl_etcd.h"
#include "ctl_etcd_int.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000
#define MAX_LINE       (64u << 20)

struct ctl_etcd_watch {
	struct ctl_etcd *e;
	char *prefix;
	struct ctl_etcd_watch_hooks h;
	struct ctl_etcd_multi m;  /* curl's sockets and timer */
	CURL *stream;		  /* the open /v3/watch, or NULL */
	CURL *read;		  /* the snapshot's /v3/kv/range in flight, or NULL */
	struct ctl_etcd_body ans; /* its answer */
	char *read_body;
	struct curl_slist *read_hdrs;
	char read_ep[CTL_ETCD_URL_MAX + 1];
	char read_detail[CURL_ERROR_SIZE];
	char ep[CTL_ETCD_URL_MAX + 1]; /* the endpoint it is open on */
	struct curl_slist *hdrs;
	char *body;
	char *buf;
	size_t n;
	int64_t rev;	    /* delivered up to here */
	bool need_snapshot; /* before the next stream */
	bool drop;	    /* close the stream after this read (cancelled, or nonsense) */
	int calls;	    /* hooks called by this poll */
	int backoff_ms;
	long long retry_at; /* CLOCK_MONOTONIC ms; 0: now */
};

static void trouble(struct ctl_etcd_watch *w, int rc, const char *msg)
{
	if (w->h.trouble) {
		w->h.trouble(w->h.arg, rc, msg);
		w->calls++;
	}
}

static void later(struct ctl_etcd_watch *w)
{
	w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (w->backoff_ms > BACKOFF_MAX_MS)
		w->backoff_ms = BACKOFF_MAX_MS;
	w->retry_at = ctl_etcd_now_ms() + w->backoff_ms;
}

static void close_stream(struct ctl_etcd_watch *w)
{
	if (w->stream) {
		curl_multi_remove_handle(w->m.multi, w->stream);
		curl_easy_cleanup(w->stream);
		w->stream = NULL;
	}
	curl_slist_free_all(w->hdrs);
	w->hdrs = NULL;
	free(w->body);
	w->body = NULL;
	w->n = 0;
	w->drop = false;
}

static void deliver(struct ctl_etcd_watch *w, json_t *events)
{
	size_t n = json_array_size(events), i, k = 0;
	struct ctl_etcd_event *ev = calloc(n ? n : 1, sizeof(*ev));
	json_t *e;

	if (!ev) {
		w->drop = true; /* reopened at w->rev: nothing is lost */
		return;
	}
	json_array_foreach(events, i, e)
	{
		const char *type = json_string_value(json_object_get(e, "type"));

		if (ctl_etcd_kv_parse(json_object_get(e, "kv"), &ev[k].kv))
			continue; /* not base64: etcd never sends it; skipped, not fatal */
		ev[k].type = type && !strcmp(type, "DELETE") ? CTL_ETCD_DELETE : CTL_ETCD_PUT;
		if (ev[k].kv.mod_rev > w->rev)
			w->rev = ev[k].kv.mod_rev;
		k++;
	}
	if (k) {
		w->h.events(w->h.arg, ev, k);
		w->calls++;
	}
	for (i = 0; i < k; i++)
		ctl_etcd_kv_clear(&ev[i].kv);
	free(ev);
}

/* one {"result": WatchResponse} (or {"error": ...}) of the stream */
static void on_line(struct ctl_etcd_watch *w, const char *line, size_t len)
{
	json_t *o = json_loadb(line, len, 0, NULL), *r, *err;
	char msg[800];

	if (!o) {
		snprintf(msg, sizeof(msg), "etcd at %s: the watch sent something not JSON", w->ep);
		trouble(w, CTL_ETCD_ERROR, msg);
		w->drop = true;
		return;
	}
	r = json_object_get(o, "result");
	if ((err = json_object_get(o, "error"))) {
		const char *m = json_string_value(json_object_get(err, "message"));

		if (!m)
			m = json_string_value(err) ? json_string_value(err) : "?";
		snprintf(msg, sizeof(msg), "etcd at %s: the watch failed: %s", w->ep, m);
		trouble(w, CTL_ETCD_ERROR, msg);
		w->drop = true;
	} else if (json_is_true(json_object_get(r, "canceled"))) {
		const char *cr = json_string_value(json_object_get(r, "compact_revision"));

		if (cr && strtoll(cr, NULL, 10) > 0) {
			w->need_snapshot = true; /* the gap is gone: read it all again */
		} else {
			const char *why = json_string_value(json_object_get(r, "cancel_reason"));

			snprintf(msg, sizeof(msg), "etcd at %s: the watch was cancelled (%s)",
				 w->ep, why ? why : "no reason given");
			trouble(w, CTL_ETCD_ERROR, msg);
			later(w);
		}
		w->drop = true;
	} else if (json_array_size(json_object_get(r, "events"))) {
		deliver(w, json_object_get(r, "events"));
		w->backoff_ms = 0; /* it works: the next break retries at once */
	} else if (json_is_true(json_object_get(r, "created"))) {
		w->backoff_ms = 0;
	}
	json_decref(o);
}

static size_t on_data(char *p, size_t sz, size_t nm, void *arg)
{
	struct ctl_etcd_watch *w = arg;
	size_t n = sz * nm, start = 0;
	char *q;

	if (w->drop)
		return 0; /* ends the transfer: closed after this read */
	if (w->n + n > MAX_LINE || !(q = realloc(w->buf, w->n + n + 1)))
		return 0;
	memcpy(q + w->n, p, n);
	w->buf = q;
	w->n += n;
	for (size_t i = 0; i < w->n && !w->drop; i++)
		if (q[i] == '\n') {
			if (i > start)
				on_line(w, q + start, i - start);
			start = i + 1;
		}
	memmove(q, q + start, w->n - start);
	w->n -= start;
	return n;
}

static char *create_body(struct ctl_etcd_watch *w)
{
	char *key = ctl_etcd_b64(w->prefix, strlen(w->prefix));
	char *end = ctl_etcd_prefix_end_b64(w->prefix), rev[24], *text = NULL;
	json_t *o;

	snprintf(rev, sizeof(rev), "%lld", (long long)w->rev + 1);
	o = key && end ? json_pack("{s:{s:s,s:s,s:s}}", "create_request", "key", key, "range_end",
				   end, "start_revision", rev)
		       : NULL;
	if (o)
		text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(key);
	free(end);
	return text;
}

static int open_stream(struct ctl_etcd_watch *w)
{
	char url[600];

	snprintf(w->ep, sizeof(w->ep), "%s", ctl_etcd_endpoint(w->e));
	snprintf(url, sizeof(url), "%s/v3/watch", w->ep);
	if (!(w->body = create_body(w)) || !(w->stream = curl_easy_init()))
		return -1;
	ctl_etcd_curl_setup(w->e, w->stream);
	curl_easy_setopt(w->stream, CURLOPT_URL, url);
	curl_easy_setopt(w->stream, CURLOPT_POSTFIELDS, w->body);
	curl_easy_setopt(w->stream, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(w->stream, CURLOPT_WRITEDATA, w);
	/* a member that dies without a FIN is noticed by keepalives */
	curl_easy_setopt(w->stream, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(w->stream, CURLOPT_TCP_KEEPIDLE, 5L);
	curl_easy_setopt(w->stream, CURLOPT_TCP_KEEPINTVL, 2L);
	w->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(w->stream, CURLOPT_HTTPHEADER, w->hdrs);
	return curl_multi_add_handle(w->m.multi, w->stream) ? -1 : 0;
}

static void close_read(struct ctl_etcd_watch *w)
{
	if (w->read) {
		curl_multi_remove_handle(w->m.multi, w->read);
		curl_easy_cleanup(w->read);
		w->read = NULL;
	}
	curl_slist_free_all(w->read_hdrs);
	w->read_hdrs = NULL;
	free(w->read_body);
	w->read_body = NULL;
	free(w->ans.p);
	w->ans = (struct ctl_etcd_body){0};
}

/* the linearizable range read of the prefix, sent without waiting for it */
static int start_read(struct ctl_etcd_watch *w)
{
	long tmo = ctl_etcd_timeout_ms(w->e);
	char *key = ctl_etcd_b64(w->prefix, strlen(w->prefix));
	char *end = ctl_etcd_prefix_end_b64(w->prefix), url[600];
	json_t *o = key && end ? json_pack("{s:s,s:s}", "key", key, "range_end", end) : NULL;

	free(key);
	free(end);
	w->read_body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	snprintf(w->read_ep, sizeof(w->read_ep), "%s", ctl_etcd_endpoint(w->e));
	snprintf(url, sizeof(url), "%s/v3/kv/range", w->read_ep);
	if (!w->read_body || !(w->read = curl_easy_init()))
		return -1;
	ctl_etcd_curl_setup(w->e, w->read);
	w->read_detail[0] = 0;
	curl_easy_setopt(w->read, CURLOPT_URL, url);
	curl_easy_setopt(w->read, CURLOPT_POSTFIELDS, w->read_body);
	/* the synchronous call's share of the deadline per member: a silent
	 * one leaves the next its turn */
	curl_easy_setopt(w->read, CURLOPT_TIMEOUT_MS, tmo / 3 > 500 ? tmo / 3 : 500L);
	curl_easy_setopt(w->read, CURLOPT_WRITEFUNCTION, ctl_etcd_body_data);
	curl_easy_setopt(w->read, CURLOPT_WRITEDATA, &w->ans);
	curl_easy_setopt(w->read, CURLOPT_ERRORBUFFER, w->read_detail);
	w->read_hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(w->read, CURLOPT_HTTPHEADER, w->read_hdrs);
	return curl_multi_add_handle(w->m.multi, w->read) ? -1 : 0;
}

/* the read came to curl's code c: the snapshot, or why not (then the next
 * endpoint after the backoff) */
static void read_done(struct ctl_etcd_watch *w, int c)
{
	struct ctl_etcd_answer a = {0};
	long status = 0;
	json_t *o = NULL;
	char msg[800];
	int rc;

	curl_easy_getinfo(w->read, CURLINFO_RESPONSE_CODE, &status);
	/* etcd's own timeout: the synchronous call asks the member's status
	 * to name it (a request of 0.5 s); here it is one more silent member
	 * (base64 has no spaces: these are etcd's words, not a value's) */
	if (c == CURLE_OK && w->ans.p &&
	    (strstr(w->ans.p, "request timed out") || strstr(w->ans.p, "deadline exceeded")))
		rc = CTL_ETCD_SILENT;
	else
		rc = ctl_etcd_classify(w->e, w->read_ep, "/v3/kv/range", c, w->read_detail,
				       w->ans.p, status, &o);
	if (rc == CTL_ETCD_OK)
		rc = ctl_etcd_answer_parse(w->e, "/v3/kv/range", o, &a);
	json_decref(o);
	close_read(w);
	if (rc == CTL_ETCD_OK) {
		w->h.snapshot(w->h.arg, &a.kvs);
		w->calls++;
		w->rev = a.kvs.revision;
		w->need_snapshot = false;
		w->backoff_ms = 0;
		w->retry_at = 0; /* the stream, at once */
		ctl_etcd_kvs_free(&a.kvs);
		return;
	}
	if (rc == CTL_ETCD_SILENT)
		snprintf(msg, sizeof(msg),
			 "etcd at %s: the watch's read: no answer in time (no leader, or slow)",
			 w->read_ep);
	else
		snprintf(msg, sizeof(msg), "%s", ctl_etcd_errmsg(w->e));
	if (rc == CTL_ETCD_SILENT || rc == CTL_ETCD_AGAIN) {
		/* another member may answer: this one is paused, gone or has
		 * no leader */
		if (!strcmp(w->read_ep, ctl_etcd_endpoint(w->e)))
			ctl_etcd_next_endpoint(w->e);
		rc = rc == CTL_ETCD_SILENT	? CTL_ETCD_TIMEOUT
		     : strstr(msg, "no leader") ? CTL_ETCD_NO_QUORUM
						: CTL_ETCD_UNREACHABLE;
	}
	trouble(w, rc, msg);
	later(w);
}

/* the stream ended: why, and when to try again */
static void ended(struct ctl_etcd_watch *w, CURLcode c)
{
	char msg[700];
	bool dropped = w->drop;

	close_stream(w);
	if (dropped && c == CURLE_WRITE_ERROR)
		return; /* we ended it; need_snapshot or the backoff says what next */
	/* the member went away (or never came): the next one, from where we are */
	snprintf(msg, sizeof(msg), "etcd at %s: the watch stream ended (%s); resuming at %lld",
		 w->ep, curl_easy_strerror(c), (long long)w->rev + 1);
	if (!strcmp(w->ep, ctl_etcd_endpoint(w->e)))
		ctl_etcd_next_endpoint(w->e);
	trouble(w, c == CURLE_OK ? CTL_ETCD_ERROR : CTL_ETCD_UNREACHABLE, msg);
	later(w);
}

int ctl_etcd_watch_next_ms(const struct ctl_etcd_watch *w)
{
	long long at = w->stream || w->read ? w->m.curl_at : w->retry_at, left;

	if (at < 0)
		return -1;
	left = at - ctl_etcd_now_ms();
	return left <= 0 ? 0 : left > 60000 ? 60000 : (int)left;
}

int ctl_etcd_watch_fd(const struct ctl_etcd_watch *w)
{
	return w->m.epfd;
}

/* what is due now: the snapshot's read, or the stream once it answered */
static void begin(struct ctl_etcd_watch *w)
{
	if (w->stream || w->read || ctl_etcd_now_ms() < w->retry_at)
		return;
	if (w->need_snapshot) {
		if (start_read(w)) {
			close_read(w);
			trouble(w, CTL_ETCD_ERROR,
				"the watch's read could not be sent (out of memory)");
			later(w);
		}
	} else if (open_stream(w)) {
		close_stream(w);
		trouble(w, CTL_ETCD_ERROR, "the watch could not be opened (out of memory)");
		later(w);
	}
}

int ctl_etcd_watch_poll(struct ctl_etcd_watch *w, int timeout_ms)
{
	struct epoll_event ev[8];
	CURLMsg *m;
	int left, n, due;

	w->calls = 0;
	begin(w);
	if (w->calls)
		timeout_ms = 0; /* the owner has news: give it back now */
	due = ctl_etcd_watch_next_ms(w);
	if (timeout_ms < 0 || (due >= 0 && due < timeout_ms))
		timeout_ms = due;
	n = epoll_wait(w->m.epfd, ev, 8, timeout_ms);
	ctl_etcd_multi_sockets(&w->m, ev, n, -1);
	if (w->stream || w->read)
		ctl_etcd_multi_timer(&w->m);
	while ((m = curl_multi_info_read(w->m.multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		if (m->easy_handle == w->stream)
			ended(w, m->data.result);
		else if (m->easy_handle == w->read)
			read_done(w, m->data.result);
	}
	if (w->stream && w->drop)
		ended(w, CURLE_WRITE_ERROR);
	/* what this poll made due (the stream after a snapshot handed over,
	 * the read after a compaction) goes now, not on the next poll */
	begin(w);
	return w->calls;
}

int64_t ctl_etcd_watch_revision(const struct ctl_etcd_watch *w)
{
	return w->rev;
}

struct ctl_etcd_watch *ctl_etcd_watch_start(struct ctl_etcd *e, const char *prefix,
					    int64_t from_rev, const struct ctl_etcd_watch_hooks *h)
{
	struct ctl_etcd_watch *w = calloc(1, sizeof(*w));

	if (!w || !(w->prefix = strdup(prefix)) || ctl_etcd_multi_init(&w->m)) {
		if (w)
			free(w->prefix);
		free(w);
		return NULL;
	}
	w->e = e;
	w->h = *h;
	w->rev = from_rev > 0 ? from_rev - 1 : 0;
	w->need_snapshot = from_rev <= 0;
	return w;
}

void ctl_etcd_watch_stop(struct ctl_etcd_watch *w)
{
	if (!w)
		return;
	close_stream(w);
	close_read(w);
	ctl_etcd_multi_fini(&w->m);
	free(w->buf);
	free(w->prefix);
	free(w);
}

size_t ctl_etcd_watch_feed(struct ctl_etcd_watch *w, const char *p, size_t n)
{
	return on_data((char *)p, 1, n, w);
}
