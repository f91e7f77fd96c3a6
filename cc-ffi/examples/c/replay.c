/* Replays a recorded event trace through the engine's C API.
 *
 * Reads codec frames (what `hal-sim run --record FILE` writes) from
 * /dev/stdin, hands each event to the engine through its per-event
 * function, and writes every answer to /dev/stdout as the codec's
 * decision or refusal frame, and every configuration frame as it came:
 * the bytes the Rust engine answers to the same trace. The same source
 * runs on the host and, built with picolibc, on the riscv32imac and
 * riscv64imac soft cores under QEMU (semihosting opens the two files on
 * the host).
 *
 * The host of a trace names its flows by number; a NIC would keep each
 * flow's handle in its flow context, and this program keeps them in a
 * small open-addressing table instead.
 *
 * Exit status: 0 at the halt frame, 1 for a malformed trace, 2 if the
 * engine cannot be set up. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cc_engine.h"

/* Flows at once: the same as the Rust engine the answers are compared
 * with (Engine<AnyController<8>, 1024, Sprayer>). */
#define CAPACITY 1024
/* Bytes for the engine; cc_engine_size(CAPACITY) is checked against it. */
#define ENGINE_BYTES (512u * 1024u)
/* Bytes for the flows' path choice (the trace's sprayed flows);
 * cc_paths_size(CAPACITY) is checked against it. */
#define PATHS_BYTES (192u * 1024u)

static _Alignas(16) uint8_t engine_mem[ENGINE_BYTES];
static _Alignas(16) uint8_t paths_mem[PATHS_BYTES];

/* Flow id -> handle, open addressing with tombstones; twice the capacity
 * and a power of two so probing always ends. */
#define MAP_SLOTS (4 * CAPACITY)
enum { EMPTY = 0, LIVE = 1, GONE = 2 };
static struct {
    uint32_t id;
    uint32_t handle;
    uint8_t state;
} map[MAP_SLOTS];

static uint32_t slot_of(uint32_t id) { return (id * 2654435761u) & (MAP_SLOTS - 1); }

static int map_find(uint32_t id, uint32_t *handle) {
    for (uint32_t i = slot_of(id), n = 0; n < MAP_SLOTS; i = (i + 1) & (MAP_SLOTS - 1), n++) {
        if (map[i].state == EMPTY) return 0;
        if (map[i].state == LIVE && map[i].id == id) {
            *handle = map[i].handle;
            return 1;
        }
    }
    return 0;
}

static void map_put(uint32_t id, uint32_t handle) {
    for (uint32_t i = slot_of(id), n = 0; n < MAP_SLOTS; i = (i + 1) & (MAP_SLOTS - 1), n++) {
        if (map[i].state != LIVE) {
            map[i].id = id;
            map[i].handle = handle;
            map[i].state = LIVE;
            return;
        }
    }
}

static void map_remove(uint32_t id) {
    for (uint32_t i = slot_of(id), n = 0; n < MAP_SLOTS; i = (i + 1) & (MAP_SLOTS - 1), n++) {
        if (map[i].state == EMPTY) return;
        if (map[i].state == LIVE && map[i].id == id) {
            map[i].state = GONE;
            return;
        }
    }
}

/* One event through the C API; the status and, on CC_STATUS_OK, the
 * decision in *d. */
static cc_status handle_event(cc_engine *e, const cc_trace_event *ev, const cc_hop *hops, cc_decision *d) {
    uint32_t h;
    if (ev->kind == CC_EVENT_START) {
        if (map_find(ev->flow_id, &h)) return CC_STATUS_FLOW_EXISTS;
        cc_status s = cc_flow_start(e, ev->now_ns, &ev->params, &h, d);
        if (s == CC_STATUS_OK) map_put(ev->flow_id, h);
        return s;
    }
    if (!map_find(ev->flow_id, &h)) return CC_STATUS_UNKNOWN_FLOW;
    uint64_t now = ev->now_ns;
    switch (ev->kind) {
    case CC_EVENT_END: {
        cc_status s = cc_flow_end(e, h, d);
        if (s == CC_STATUS_OK) map_remove(ev->flow_id);
        return s;
    }
    case CC_EVENT_ACK: return cc_on_ack(e, h, now, &ev->ack, d);
    case CC_EVENT_SENT: return cc_on_sent(e, h, now, ev->seq, ev->len, ev->last, d);
    case CC_EVENT_LOSS: return cc_on_loss(e, h, now, ev->seq, ev->ack.has_ev, ev->ack.ev, d);
    case CC_EVENT_NACK: {
        cc_nack n = {ev->seq, ev->len, ev->ack.cum_ack, ev->ack.snd_nxt, ev->rtt_ns,
                     ev->has_rtt, ev->last, ev->ack.ece, ev->ack.has_ev, ev->ack.ev, 0};
        return cc_on_nack(e, h, now, &n, d);
    }
    case CC_EVENT_SPRAY: return cc_on_spray(e, h, now, &ev->spray, d);
    case CC_EVENT_CNP: return cc_on_cnp(e, h, now, d);
    case CC_EVENT_RTT_RESPONSE: return cc_on_rtt_response(e, h, now, ev->probe_id, ev->has_rtt, ev->rtt_ns, d);
    case CC_EVENT_PROBE_RESPONSE: return cc_on_probe_response(e, h, now, ev->probe_id, ev->hop_index, &hops[0], d);
    case CC_EVENT_RX_TELEMETRY: return cc_on_rx_telemetry(e, h, now, hops, ev->n_hops, d);
    case CC_EVENT_PROBE_REQUEST: return cc_on_probe_request(e, h, now, hops, ev->n_hops, d);
    case CC_EVENT_FEEDBACK: return cc_on_feedback(e, h, now, ev->window_q4, d);
    case CC_EVENT_FLOW_COUNT: return cc_on_flow_count(e, h, now, ev->flows, d);
    case CC_EVENT_TIMER: return cc_on_timer(e, h, now, d);
    default: return CC_STATUS_BAD_ENUM;
    }
}

int main(void) {
    FILE *in = fopen("/dev/stdin", "rb");
    FILE *out = fopen("/dev/stdout", "wb");
    if (in == NULL || out == NULL) return 2;
    if ((cc_abi_version() >> 16) != CC_ABI_VERSION_MAJOR) return 2;

    cc_engine *engine;
    if (cc_engine_size(CAPACITY) > sizeof engine_mem || cc_engine_align() > 16) return 2;
    if (cc_engine_init(engine_mem, sizeof engine_mem, CAPACITY, &engine) != CC_STATUS_OK) return 2;
    if (cc_paths_size(CAPACITY) > sizeof paths_mem || cc_paths_align() > 16) return 2;

    static uint8_t buf[4 * CC_TRACE_MAX_FRAME];
    static uint8_t answer[CC_TRACE_MAX_FRAME];
    size_t have = 0, at = 0;
    int eof = 0;
    for (;;) {
        size_t frame_len;
        uint8_t kind;
        cc_status s = cc_trace_frame(buf + at, have - at, &frame_len, &kind);
        if (s == CC_STATUS_BUFFER_TOO_SMALL) {
            if (eof) return 1; /* the trace ends inside a frame */
            memmove(buf, buf + at, have - at);
            have -= at;
            at = 0;
            size_t n = fread(buf + have, 1, sizeof buf - have, in);
            if (n == 0) eof = 1;
            have += n;
            continue;
        }
        if (s != CC_STATUS_OK) return 1;
        const uint8_t *frame = buf + at;
        at += frame_len;
        if (kind == CC_FRAME_HALT) break;
        if (kind == CC_FRAME_CONFIG) {
            if (cc_engine_reset(engine) != CC_STATUS_OK) return 1;
            if (cc_trace_read_config(frame, frame_len, engine) != CC_STATUS_OK) return 1;
            if (cc_engine_attach_paths(engine, paths_mem, sizeof paths_mem) != CC_STATUS_OK) return 1;
            memset(map, 0, sizeof map);
            fwrite(frame, 1, frame_len, out);
            continue;
        }
        if (kind != CC_FRAME_EVENT) return 1;
        cc_trace_event ev;
        cc_hop hops[CC_MAX_HOPS];
        if (cc_trace_read_event(frame, frame_len, &ev, hops, CC_MAX_HOPS) != CC_STATUS_OK) return 1;
        cc_decision d;
        cc_status r = handle_event(engine, &ev, hops, &d);
        size_t n;
        if (cc_trace_answer(ev.flow_id, (uint32_t)r, &d, answer, sizeof answer, &n) != CC_STATUS_OK) return 1;
        fwrite(answer, 1, n, out);
    }
    fclose(out);
    return 0;
}
