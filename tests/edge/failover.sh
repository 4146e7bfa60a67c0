#!/usr/bin/env bash
# Two roots of the edge tree on a three-member etcd cluster behind TLS with
# client certificates ([Store] Backend = etcd), active/standby, with a child
# attached:
#
#   r1, r2 (one root, two processes; one leads)
#   `- c   (Parent lists both roots, the standby first: it links to the leader)
#
# Missions made at the leader: the standby serves them (same
# resourceVersions) and the child's state reported up; the standby refuses
# writes with 503 naming the leader, and children. kill -9 of the leader:
# the standby takes over with every acknowledged mission, the child links
# to it and keeps reporting, new missions flow down; the commands the old
# leader ran for the root's own missions do not run again (what a root
# applied is shared through etcd). The old leader comes
# back as the standby. A watch on the standby sees the leader's creates. A
# leader paused past its lease acknowledges nothing after it is continued,
# and stops. One etcd member stopped: writes, the standby and the child go on.
# A second one paused (no quorum): a write fails (500, or 504: it may still
# be applied), the standby reads on (backing off its campaigns) and names
# the leader in every /healthz, the leader stops and, restarted, serves what
# a member had as a standby; the quorum back: a root leads, both roots agree
# on every mission and rv, the standby names the leader, the child links to
# it. Every standby names the leader's current process (its election id,
# which the standby's watch of the election key delivers).
# usage: failover.sh PATH/TO/edgeclusterd
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ECD=$(readlink -f "$1")
source "$HERE/../etcd.sh"
source "$HERE/failover_lib.sh"
etcd_test_stop() { edfo_stop; }
# etcd behind TLS with client certificates, as a root would use it
etcd_test xgt-edfo 3 tls || { not_ok "no etcd cluster"; summary; exit 1; }
edfo_confs 1s 4s c

# ---- two roots: r1 leads, r2 stands by ----
start r1 && [ "$(code r1)" = 200 ] && ok "r1 is up and leads (/healthz 200)" ||
	not_ok "r1 did not come up as the leader: $(tail -3 "$T/r1.log")"
start r2 || not_ok "r2 did not start: $(tail -3 "$T/r2.log")"
expect 5 "r2 is the standby: /healthz 503" 503 code r2
curl -s "$(url r2)/healthz" | grep -q "${PORT[r1]}" && ok "r2's /healthz names the leader, r1" ||
	not_ok "r2's healthz: $(curl -s "$(url r2)/healthz")"

# ---- a child whose Parent lists the standby first ----
start c || not_ok "c did not start: $(tail -3 "$T/c.log")"
expect 30 "c attached to the leader, r1 (the standby refused it)" "c=ok root=ok" tree_at r1
expect 5 "the standby's view has c too" "c=ok root=ok" tree_at r2

# ---- missions at the leader; the standby serves them ----
curl -sN --max-time 60 -H "Authorization: Bearer $TOK" "$(url r2)/apis/edge.xgate.io/v1/missions?watch=1" > "$T/watch" &
WPID=$!
# m1..m5's command writes a line per run: MISSION CLUSTER'S-COMMAND-LINE
printf '#!/bin/sh\necho "$1 $(tr "\\0" " " < /proc/$PPID/cmdline)" >> %s/runs\n' "$T" > "$T/run.sh"
chmod +x "$T/run.sh"
root_runs() { grep -c "^$1 .*/r[12].conf" "$T/runs"; }
made=""
for i in 1 2 3 4 5; do
	rc=$(create r1 "m$i" "[\"$T/run.sh\",\"m$i\"]" "content of m$i")
	[ "$rc" = 201 ] && made="$made m$i" || not_ok "create m$i at r1: $rc $(cat "$T/last")"
done
[ "$made" = " m1 m2 m3 m4 m5" ] && ok "five missions made at the leader (201)"
for i in 1 2 3 4 5; do in_etcd "m$i" || not_ok "m$i is not in etcd"; done
ok "etcd holds the five missions' rows"
expect 10 "the standby lists them" "m1 m2 m3 m4 m5" missions_at r2
expect 5 "with the leader's resourceVersions" "$(rvs_at r1)" rvs_at r2
added() { jq -r 'select(.type == "ADDED") | .object.metadata.name' "$T/watch" 2>/dev/null | sort | paste -sd' '; }
expect 5 "a watch on the standby sees them ADDED" "m1 m2 m3 m4 m5" added
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=
expect 20 "c applied m5 and reported it up to the leader" ok state_at r1 m5 c
expect 20 "the root applied m5 itself" ok state_at r1 m5 root
expect 5 "the child's report is in the standby's view" ok state_at r2 m5 c
expect 10 "c has the five missions" "m1 m2 m3 m4 m5" missions_at c

rc=$(create r2 refused)
[ "$rc" = 503 ] && grep -q "standby" "$T/last" && grep -q "127.0.0.1:${PORT[r1]}" "$T/last" &&
	ok "the standby refuses a write: 503 naming the leader" || not_ok "write at the standby: $rc $(cat "$T/last")"
rc=$(curl -s -o "$T/last" -w '%{http_code}' -X DELETE -H "Authorization: Bearer $TOK" "$(url r2)/apis/edge.xgate.io/v1/missions/m1")
[ "$rc" = 503 ] && ok "and a delete: 503" || not_ok "delete at the standby: $rc $(cat "$T/last")"
in_etcd refused && not_ok "etcd has the refused mission" || ok "etcd has nothing of the refused write"
[ "$(missions_at r1)" = "m1 m2 m3 m4 m5" ] && ok "the leader has nothing of it either" || not_ok "r1: $(missions_at r1)"

# ---- kill -9 the leader ----
RVS=$(rvs_at r1)
T0=$(date +%s%N)
kill -9 "${PID[r1]}"
wait "${PID[r1]}" 2>/dev/null
PID[r1]=
expect 20 "r2 takes over (/healthz 200)" 200 code r2
T1=$(date +%s%N)
[ "$(rvs_at r2)" = "$RVS" ] && ok "every acknowledged mission is at r2, at its resourceVersion" ||
	not_ok "r2 has $(rvs_at r2), r1 had $RVS"
expect 30 "c links to r2 and reports (health ok at r2)" "c=ok root=ok" tree_at r2
T2=$(date +%s%N)
# printed, not asserted (ElectionTTL = 4 s sets the floor)
echo "# failover: kill -9 to the standby leading $(((T1 - T0) / 1000000)) ms, to c linked and healthy at it $(((T2 - T0) / 1000000)) ms"
rc=$(create r2 m6)
[ "$rc" = 201 ] && ok "r2 takes writes: m6 made (201)" || not_ok "create m6 at r2: $rc $(cat "$T/last")"
expect 20 "m6 flows down to c" "m1 m2 m3 m4 m5 m6" missions_at c
expect 20 "c applies m6 and reports it up to r2" ok state_at r2 m6 c
grep -q "election: this root leads now" "$T/r2.log" && ok "r2 logged its takeover" || not_ok "r2's log: $(tail -3 "$T/r2.log")"
# what r1 applied is shared through etcd: r2 resumes from its records
expect 20 "r2 applies m6 at the root" ok state_at r2 m6 root
expect 5 "and checks m1..m5's state" ok state_at r2 m1 root
runs=$(for i in 1 2 3 4 5; do root_runs "m$i"; done | paste -sd' ')
[ "$runs" = "1 1 1 1 1" ] && ok "the new leader did not run m1..m5's commands again (once each)" ||
	not_ok "the roots ran m1..m5's commands $runs times: $(cat "$T/runs")"
# the local driver's content file, written by r1 in its work directory: r2 writes it in its own
[ "$(cat "$T/r2.missions/m3/content" 2>&1)" = "content of m3" ] &&
	ok "r2 wrote m3's content in its work directory, without running m3 again" ||
	not_ok "m3's content at r2: $(cat "$T/r2.missions/m3/content" 2>&1)"

# ---- r1 comes back: the standby now ----
start r1
expect 10 "r1 restarts as the standby (503)" 503 code r1
# names A B: A's /healthz is a standby's naming B's process (the id: URL and pid)
names() { curl -s -m 3 "$(url "$1")/healthz" | grep -qxF "standby; the leader is $(url "$2") (pid ${PID[$2]})"; }
wait_for 10 names r1 r2 && ok "r1's /healthz names the new leader, r2" ||
	not_ok "r1's healthz: $(curl -s -m 3 "$(url r1)/healthz")"
expect 10 "with r2's missions, m6 too" "$(rvs_at r2)" rvs_at r1
sleep 4 # past HeartbeatTimeout: a standby's hub must not judge the children (the leader's to do)
grep -q "hub: marking" "$T/r1.log" && not_ok "the standby r1 tried to mark children: $(grep 'hub: marking' "$T/r1.log" | tail -1)" ||
	ok "the standby writes nothing of its own about the children"

# ---- a deposed leader writes nothing: r2 paused past its lease ----
kill -STOP "${PID[r2]}"
expect 20 "r2 paused past its lease: r1 takes over" 200 code r1
curl -s -o "$T/late" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	--data-binary "$(mission late)" --max-time 20 "$(url r2)/apis/edge.xgate.io/v1/missions" > "$T/late.code" &
LATE=$!
sleep 0.5
kill -CONT "${PID[r2]}"
wait "$LATE"
[ "$(cat "$T/late.code")" != 201 ] && ok "the deposed r2 did not acknowledge the write ($(cat "$T/late.code"))" ||
	not_ok "the deposed r2 acknowledged a write"
in_etcd late && not_ok "etcd has the deposed root's write" || ok "etcd has nothing of it"
wait_for 10 dead "${PID[r2]}" && ok "r2 stops, saying it no longer leads" || not_ok "r2 still runs"
wait "${PID[r2]}" 2>/dev/null
PID[r2]=
grep -q "no longer lead" "$T/r2.log" && ok "(its log says so)" || not_ok "r2's log: $(tail -3 "$T/r2.log")"
expect 30 "c links to r1 again" "c=ok root=ok" tree_at r1
[ "$(missions_at r1)" = "m1 m2 m3 m4 m5 m6" ] && ok "r1 has every mission and not the late one" || not_ok "r1: $(missions_at r1)"

# ---- one etcd member stopped: nothing changes ----
kill "${ETCD_PID[0]}"
wait_for 10 etcd_gone "${ETCD_PID[0]}" && ok "etcd member 0 stopped" || not_ok "etcd member 0 still runs"
rc=$(create r1 m7)
[ "$rc" = 201 ] && ok "the leader still takes writes (m7: 201)" || not_ok "create m7 with a member down: $rc $(cat "$T/last")"
start r2
expect 10 "r2 comes back as the standby (503)" 503 code r2
wait_for 10 names r2 r1 && ok "r2's /healthz names the leader, r1 (the lead moved back)" ||
	not_ok "r2's healthz: $(curl -s -m 3 "$(url r2)/healthz")"
expect 10 "with m7" "m1 m2 m3 m4 m5 m6 m7" missions_at r2
expect 20 "m7 flows down to c" "m1 m2 m3 m4 m5 m6 m7" missions_at c

# ---- a second member paused: no quorum ----
kill -STOP "${ETCD_PID[1]}"
rm -f "$T/last"
rc=$(create r1 no-quorum)
# 500 or 504; or, when the leader's lease ran out meanwhile, 503 (it gave the lead
# up and answers as a standby until it stops) or no answer (it stopped): never 201
case $rc in
500 | 503 | 504 | 000) ok "no quorum: a write is not acknowledged ($rc: $(jq -r .message "$T/last" 2>/dev/null))" ;;
*) not_ok "a write without a quorum: $rc $(cat "$T/last")" ;;
esac
[ "$(api r2 missions/m7 | jq -r .metadata.name)" = m7 ] && ok "the standby still serves reads from its view" ||
	not_ok "r2's read without a quorum: $(api r2 missions/m7)"
# and between its campaigns, each of which etcd leaves unanswered for up to
# Timeout (1 s) while it holds the loop: the next waits a back-off (1, 2, 4,
# 8 s), not the fallback period (400 ms). Counted, not timed: over ten reads
# a second apart at most 5 campaigns (without the back-off, one every 1.4 s).
# Who leads is what its watch of the election key saw last: r1, named in
# every /healthz without a request to etcd (a member paused, no quorum)
campaigns() { grep -c "election .*: campaign: " "$T/$1.log"; }
c0=$(campaigns r2)
reads=0 named=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	[ "$(api r2 missions/m7 | jq -r .metadata.name)" = m7 ] && reads=$((reads + 1))
	names r2 r1 && named=$((named + 1))
	sleep 1
done
n=$(($(campaigns r2) - c0))
[ "$reads" = 10 ] && ok "the standby answers ten reads in a row without a quorum" ||
	not_ok "the standby answered $reads of ten reads without a quorum"
[ "$named" = 10 ] && ok "and its /healthz names the leader, r1, ten times in a row" ||
	not_ok "the standby's /healthz named r1 $named times of ten: $(curl -s -m 3 "$(url r2)/healthz")"
[ "$n" -ge 1 ] && [ "$n" -le 5 ] && ok "meanwhile it campaigned $n times, backing off (at most 5)" ||
	not_ok "the standby campaigned $n times over ten reads: $(grep 'campaign: ' "$T/r2.log" | tail -3)"
# the leader cannot renew its lease: it stops; restarted, it serves what etcd knew
wait_for 20 dead "${PID[r1]}" && ok "r1 lost the lead without a quorum and stopped" || not_ok "r1 still runs"
wait "${PID[r1]}" 2>/dev/null
PID[r1]=
start r1
expect 10 "restarted without a quorum, r1 is a standby (503)" 503 code r1
expect 5 "serving every mission a member had" "m1 m2 m3 m4 m5 m6 m7" missions_at r1
kill -CONT "${ETCD_PID[1]}"
leads() { [ "$(code r1)" = 200 ] || [ "$(code r2)" = 200 ]; }
wait_for 30 leads && ok "quorum back: a root leads" || not_ok "nobody leads: $(tail -2 "$T/r1.log") $(tail -2 "$T/r2.log")"
L=r1
[ "$(code r1)" = 200 ] || L=r2
O=$([ $L = r1 ] && echo r2 || echo r1)
if dead "${PID[$O]:-0}" 2>/dev/null || [ -z "${PID[$O]}" ]; then start "$O"; fi
[ "$(code "$O")" = 503 ] || wait_for 10 is 503 code "$O"
both_same() { [ "$(rvs_at r1)" = "$(rvs_at r2)" ] && [ -n "$(rvs_at r1)" ]; }
wait_for 10 both_same && ok "both roots agree on every mission and rv ($L leads; no-quorum: $(api $L missions/no-quorum >/dev/null && echo applied late || echo not there))" ||
	not_ok "the roots differ: r1 $(rvs_at r1) r2 $(rvs_at r2)"
# the standby saw the key change hands on its watch (the old key's lease
# ran out once the quorum was back, then a campaign won): it names the winner
wait_for 10 names "$O" "$L" && ok "the standby $O names the leader, $L" ||
	not_ok "$O's healthz: $(curl -s -m 3 "$(url "$O")/healthz"), $L is pid ${PID[$L]}"
expect 30 "c links to the leader, $L" "c=ok root=ok" tree_at "$L"

# what exited on its own (a deposed root) or on SIGTERM reports leaks and errors
for n in r1 r2 c; do [ -n "${PID[$n]}" ] && kill "${PID[$n]}" 2>/dev/null; done
for n in r1 r2 c; do [ -n "${PID[$n]}" ] && wait "${PID[$n]}" 2>/dev/null; PID[$n]=; done
grep -q "Sanitizer\|runtime error" "$T"/r1.log "$T"/r2.log "$T"/c.log &&
	not_ok "sanitizer reports: $(grep -h -A5 'Sanitizer\|runtime error' "$T"/*.log | head -20)" ||
	ok "no sanitizer report in the daemons' logs"

if [ "$FAILED" -gt 0 ]; then
	for n in r1 r2 c; do echo "# --- $n.log"; tail -15 "$T/$n.log" | sed 's/^/# /'; done
fi
summary
