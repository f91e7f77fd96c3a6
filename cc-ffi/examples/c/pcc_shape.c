/* How a firmware built around per-event callbacks would call the engine.
 *
 * Programmable congestion-control frameworks on NICs (NVIDIA's DOCA PCC
 * is one) hand the firmware one event at a time, with the flow's context:
 * a TX burst finished, an ACK, a NACK, a CNP, an RTT-probe reply; the
 * firmware answers with the flow's new rate as a fraction of line rate.
 * This program has that shape, written from the public description of the
 * model; the event and context types below are this example's own, not a
 * vendor's. The engine's handle lives in the flow context; each callback
 * maps its event's fields to the engine's event, and the decision's pace
 * (bytes every period) to a fraction of the line rate.
 *
 * main() plays three flows through the callback and checks what the
 * drafts say should happen: HPCC++ starts at line rate and slows when
 * telemetry shows a queue on a fully used link; DCQCN halves its rate at
 * its first CNP; LDCP's rate variant cuts its window by beta on a CNP.
 * Exit status 0 when every check holds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cc_engine.h"

/* The NIC's events, as the framework would deliver them. */
typedef enum { EV_TX_BURST, EV_ACK, EV_NACK, EV_CNP, EV_RTT_REPLY } nic_event_type;

typedef struct {
    nic_event_type type;
    uint64_t time_ns;
    uint32_t sn;        /* TX burst: first byte sent; ACK: cumulative ACK; NACK: first lost */
    uint32_t bytes;     /* TX burst: bytes sent */
    uint32_t snd_nxt;   /* ACK: the next byte to send */
    uint8_t ecn_echo;   /* ACK: congestion experienced */
    uint8_t probe_id;   /* RTT reply */
    uint32_t rtt_ns;    /* RTT reply, or 0 */
    const cc_hop *hops; /* ACK: telemetry echoed by the receiver */
    uint32_t n_hops;
} nic_event;

/* A flow's context, which the NIC keeps per queue pair. */
typedef struct {
    uint32_t handle;         /* the engine's handle for the flow */
    uint64_t line_bps;       /* the port's line rate */
    uint32_t rate_fraction;  /* the answer: rate / line rate, 2^-16 */
    uint32_t window_bytes;
    int refused;             /* events the engine refused */
} flow_ctx;

/* The rate a decision's pace means, as a fraction of the line rate in
 * 2^-16, at most 1: bytes_q4/16 bytes every per_ns ns is
 * bytes_q4 · 5e8 / per_ns bit/s. */
static uint32_t rate_fraction(const cc_decision *d, uint64_t line_bps) {
    uint64_t bps = (uint64_t)d->pacing_bytes_q4 * 500000000ull / d->pacing_per_ns;
    if (bps >= line_bps) return 1u << 16;
    return (uint32_t)((bps << 16) / line_bps);
}

static cc_engine *engine;

/* The callback: one event of one flow in, the flow's rate out. */
static void on_event(flow_ctx *ctx, const nic_event *ev) {
    cc_decision d;
    cc_status s;
    switch (ev->type) {
    case EV_TX_BURST:
        s = cc_on_sent(engine, ctx->handle, ev->time_ns, ev->sn, ev->bytes, 0, &d);
        break;
    case EV_ACK: {
        cc_ack ack = {
            .cum_ack = ev->sn,
            .snd_nxt = ev->snd_nxt,
            .ece = ev->ecn_echo,
            .hops = ev->hops,
            .n_hops = ev->n_hops,
        };
        s = cc_on_ack(engine, ctx->handle, ev->time_ns, &ack, &d);
        break;
    }
    case EV_NACK:
        s = cc_on_loss(engine, ctx->handle, ev->time_ns, ev->sn, 0, 0, &d);
        break;
    case EV_CNP:
        s = cc_on_cnp(engine, ctx->handle, ev->time_ns, &d);
        break;
    case EV_RTT_REPLY:
        s = cc_on_rtt_response(engine, ctx->handle, ev->time_ns, ev->probe_id, ev->rtt_ns != 0, ev->rtt_ns, &d);
        break;
    default:
        s = CC_STATUS_BAD_ENUM;
        break;
    }
    if (s != CC_STATUS_OK) {
        /* Nothing changed in the engine: keep the rate the flow has. */
        ctx->refused++;
        return;
    }
    ctx->rate_fraction = rate_fraction(&d, ctx->line_bps);
    ctx->window_bytes = d.window_q4 >> 4;
}

static int start(flow_ctx *ctx, uint8_t algorithm, uint64_t now_ns) {
    cc_flow_params p = {
        .algorithm = algorithm,
        .base_rtt_ns = 8000,
        .line_rate_mbps = 100000,
        .start_seq = 0,
    };
    cc_decision d;
    if (cc_flow_start(engine, now_ns, &p, &ctx->handle, &d) != CC_STATUS_OK) return 0;
    ctx->line_bps = 100000000000ull;
    ctx->rate_fraction = rate_fraction(&d, ctx->line_bps);
    ctx->window_bytes = d.window_q4 >> 4;
    ctx->refused = 0;
    return 1;
}

static int failures;
/* /dev/stdout, opened as a file: under QEMU, semihosting opens the
 * host's, where the console would go to the (unconnected) UART. */
static FILE *out;

static void check(int ok, const char *what) {
    fprintf(out, "%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

#define FLOWS 16
static _Alignas(16) uint8_t memory[64 * 1024];

int main(void) {
    out = fopen("/dev/stdout", "w");
    if (out == NULL) return 2;
    /* Each algorithm's configuration is its own struct, passed with its
     * code and its size. */
    cc_ldcp_config ldcp_cfg;
    check(cc_config_size(CC_ALGORITHM_LDCP) == sizeof ldcp_cfg
              && cc_config_default(CC_ALGORITHM_LDCP, &ldcp_cfg, sizeof ldcp_cfg) == CC_STATUS_OK,
          "the library's LDCP struct is the header's");
    /* A configuration out of range is refused with the field named. */
    cc_ldcp_config bad = ldcp_cfg;
    bad.gamma_q24 = 1u << 24;
    const char *field = "";
    check(cc_config_check(CC_ALGORITHM_LDCP, &bad, sizeof bad, &field) == CC_STATUS_INVALID_PARAMS
              && strcmp(field, "ldcp.gamma_q24") == 0,
          "a gamma of one packet is refused, and named");
    check(cc_config_check(CC_ALGORITHM_LDCP, &ldcp_cfg, sizeof ldcp_cfg, NULL) == CC_STATUS_OK, "the defaults are in range");
    check(cc_config_check(CC_ALGORITHM_LDCP, &ldcp_cfg, sizeof ldcp_cfg - 4, NULL) == CC_STATUS_BAD_SIZE,
          "a struct of another size is refused");

    /* The hns driver's 16-byte LDCP block: cwd0 (u32, little-endian), then
     * alpha, gamma, beta, eta; the drafts' defaults are alpha = 128/128
     * packet, gamma = 2^-3, beta = 2^-1, eta = 2^-1. */
    const uint8_t ldcp_block[CC_HNS_BLOCK_LEN] = {0, 0, 0, 0, 128, 3, 1, 1};
    cc_ldcp_config from_block = ldcp_cfg;
    from_block.alpha_q24 = 1;
    check(cc_hns_ldcp_read(&from_block, ldcp_block, &field) == CC_STATUS_OK
              && memcmp(&from_block, &ldcp_cfg, sizeof ldcp_cfg) == 0,
          "the hns LDCP block of the drafts' defaults reads as the engine's defaults");
    uint8_t written[CC_HNS_BLOCK_LEN];
    check(cc_hns_ldcp_write(&ldcp_cfg, written, &field) == CC_STATUS_OK && memcmp(written, ldcp_block, sizeof written) == 0,
          "and writes back to the same bytes");
    const uint8_t eta_quarter[CC_HNS_BLOCK_LEN] = {0, 0, 0, 0, 128, 3, 1, 2};
    check(cc_hns_ldcp_read(&from_block, eta_quarter, &field) == CC_STATUS_INVALID_PARAMS && strcmp(field, "eta") == 0,
          "a block with eta = 1/4 is refused, and eta named");
    /* DCQCN: R_AI 20 Mb/s of 100 Gb/s, F 1, Ti 2^8 us, Td 2^2 us, Ta 1 us,
     * max_speed 100 000 Mb/s, g 2^-8, alpha 1 at the first CNP, CNP per 4 us. */
    const uint8_t dcqcn_block[CC_HNS_BLOCK_LEN] = {20, 0, 1, 8, 2, 0, 1, 0, 0xa0, 0x86, 0x01, 0, 8, 1, 4, 0};
    cc_dcqcn_config dcqcn_cfg;
    cc_config_default(CC_ALGORITHM_DCQCN, &dcqcn_cfg, sizeof dcqcn_cfg);
    check(cc_hns_dcqcn_read(&dcqcn_cfg, dcqcn_block, &field) == CC_STATUS_OK
              && dcqcn_cfg.increase_interval_ns == 256000 && dcqcn_cfg.decrease_interval_ns == 4000
              && cc_hns_dcqcn_write(&dcqcn_cfg, 100000, written, &field) == CC_STATUS_OK
              && memcmp(written, dcqcn_block, sizeof written) == 0,
          "the hns DCQCN block reads and writes back to the same bytes");
    if (cc_engine_size(FLOWS) > sizeof memory || cc_engine_align() > 16) return 2;
    fprintf(out, "engine of %u flows: %u bytes (%u a flow)\n", (unsigned)FLOWS, (unsigned)cc_engine_size(FLOWS),
            (unsigned)cc_engine_flow_size());
    if (cc_engine_init(memory, sizeof memory, FLOWS, &engine) != CC_STATUS_OK) return 2;
    check(cc_engine_configure(engine, CC_ALGORITHM_LDCP, &ldcp_cfg, sizeof ldcp_cfg) == CC_STATUS_OK,
          "the engine takes the LDCP struct");

    /* HPCC++: one 100 Gb/s hop, fully used, with a 100 KB queue: U is
     * about qlen/(B·T) + 1 = 100 000/100 000 + 1 = 2, so every RTT the
     * window is cut to eta/U of the last; then the queue drains and the
     * link is half used (U about 0.5), and the window grows again. */
    flow_ctx hpcc;
    check(start(&hpcc, CC_ALGORITHM_HPCC, 0), "an HPCC++ flow starts");
    check(hpcc.rate_fraction == 1u << 16, "HPCC++ starts at line rate");
    cc_hop hop = {
        .ts = 0, .tx = 0, .qlen_bytes = 100000, .speed_mbps = 100000, .id = 7,
        .ts_bits = 32, .tx_bits = 32, .tx_unit_bytes = 1,
    };
    uint32_t sent = 0;
    uint64_t now = 10000;
    uint32_t congested = 0;
    for (int i = 0; i < 48; i++, now += 1000) {
        int draining = i >= 16;
        nic_event tx = {.type = EV_TX_BURST, .time_ns = now, .sn = sent, .bytes = 12500};
        on_event(&hpcc, &tx);
        sent += 12500;
        hop.ts += 1000;                       /* 1 µs apart on the switch's clock */
        hop.tx += draining ? 6250 : 12500;    /* 100 Gb/s, then 50 Gb/s */
        hop.qlen_bytes = draining ? 0 : 100000;
        nic_event ack = {
            .type = EV_ACK, .time_ns = now + 500, .sn = sent - 100000, .snd_nxt = sent,
            .hops = &hop, .n_hops = 1,
        };
        on_event(&hpcc, &ack);
        if (i == 15) congested = hpcc.rate_fraction;
    }
    fprintf(out, "HPCC++ rate, of line: %u/65536 after 16 us of a standing queue, %u/65536 after 32 us of a half-used link\n",
           (unsigned)congested, (unsigned)hpcc.rate_fraction);
    check(hpcc.refused == 0, "HPCC++ takes every event");
    check(congested < 1u << 15, "HPCC++ slows below half the line rate behind a standing queue");
    check(hpcc.rate_fraction > congested, "HPCC++ speeds up again once the link is under-used");

    /* DCQCN: the first CNP sets alpha = 1 and cuts Rc by alpha/2 at the
     * next decrease check, which the engine's timer runs; the callback
     * sees the rate when the timer fires. */
    flow_ctx dcqcn;
    check(start(&dcqcn, CC_ALGORITHM_DCQCN, 0), "a DCQCN flow starts");
    check(dcqcn.rate_fraction == 1u << 16, "DCQCN starts at line rate");
    nic_event cnp = {.type = EV_CNP, .time_ns = 1000};
    on_event(&dcqcn, &cnp);
    cc_decision d;
    cc_status s = cc_on_timer(engine, dcqcn.handle, 1000 + 50000, &d);
    dcqcn.rate_fraction = rate_fraction(&d, dcqcn.line_bps);
    fprintf(out, "DCQCN after a CNP: rate %u/65536 of line\n", (unsigned)dcqcn.rate_fraction);
    /* Rc·(1 − alpha/2) with alpha 1 less the updates before the check
     * (g = 1/256 a microsecond): 0.5 to 0.51 of the line rate. */
    check(s == CC_STATUS_OK && dcqcn.rate_fraction >= 32768 && dcqcn.rate_fraction <= 33423,
          "DCQCN halves its rate at the first CNP");

    /* LDCP's rate variant: a CNP takes beta off the window. */
    flow_ctx ldcp;
    check(start(&ldcp, CC_ALGORITHM_LDCP_RATE, 0), "an LDCP (rate) flow starts");
    uint32_t before = ldcp.window_bytes;
    nic_event cnp2 = {.type = EV_CNP, .time_ns = 2000};
    on_event(&ldcp, &cnp2);
    fprintf(out, "LDCP (rate) window %u -> %u bytes at a CNP\n", (unsigned)before, (unsigned)ldcp.window_bytes);
    check(ldcp.window_bytes < before, "LDCP cuts its window at a CNP");

    /* An event that does not apply is refused and changes nothing. */
    nic_event nack = {.type = EV_NACK, .time_ns = 3000, .sn = 0};
    uint32_t rate = dcqcn.rate_fraction;
    on_event(&dcqcn, &nack);
    check(dcqcn.rate_fraction == rate, "a NACK leaves DCQCN's rate (the transport's business)");

    cc_stats st;
    cc_engine_stats(engine, &st);
    check(st.live_flows == 3, "three flows live");
    fprintf(out, "%s\n", failures ? "pcc_shape: FAILED" : "pcc_shape: all checks hold");
    fclose(out);
    return failures ? 1 : 0;
}
