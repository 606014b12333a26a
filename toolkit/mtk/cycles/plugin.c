/*
 * mtk's cycle model: a QEMU TCG plugin (API v1, as Debian's qemu-system-arm 7.2 loads) that estimates
 * the cycles a Cortex-M core spends on the guest code QEMU runs.
 *
 * At translation time each Thumb/Thumb-2 instruction is decoded into an instruction class and its
 * registers; a translation block's cost follows from the core's table (one row per class: base
 * cycles, cycles per register of a load/store multiple, extra cycles when a branch is taken) and
 * the pairing rules of adjacent instructions (load pipelining, address-generation and load-use
 * stalls, IT folding, dual issue, MVE beat overlap). At run time each executed block is charged:
 * its static cost, its last branch's taken cost when the next block does not start at its
 * fall-through address, code fetch waits, and load waits by address (memory regions and caches).
 *
 * The costs are data: the `table=FILE` argument, written by mtk.cycles from its per-core tables.
 * Other arguments: out=FILE (records, one a line), run=ADDR, repeatable (a function one inference
 * is: its calls are measured from entry to return), hook=ADDR:SIZE and layers=ADDR:COUNT (the per-layer hook
 * and its array: a layer ends where the hook stores into layers[index]), putc=ADDR:SIZE and uart=ADDR
 * (the console's output function and the data register it writes: the bytes written so far are
 * counted, so that a reader of the console can place each record among the bytes it reads).
 *
 * Output lines: `inference ADDR INSNS CYCLES FETCH_WAITS DATA_WAITS UART_BYTES` at each return of a `run` function;
 * `layer INDEX INSNS CYCLES FETCH_WAITS DATA_WAITS` at each hook call (the hook's own instructions are not counted in
 * any layer); `total INSNS CYCLES FETCH_WAITS DATA_WAITS` at exit. FETCH_WAITS and DATA_WAITS are the part of CYCLES
 * that code fetches and loads waited for their memory (wait states, cache misses, the rest of a prefetched read).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the few declarations of QEMU's plugin API v1 this plugin uses (Debian ships no qemu-plugin.h) ---- */

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef uint32_t qemu_plugin_meminfo_t;
typedef struct {
    int system_emulation;
    int _rest[8];
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- instruction classes: the names are the rows of mtk.cycles' tables ---- */

#define CLASSES(X) \
    X(ALU) X(ALU_PC) X(SIMD) X(MUL) X(MLA) X(MAC_DSP) X(MUL_LONG) X(MAC_LONG) X(DIV) \
    X(LOAD) X(STORE) X(STORE_REG) X(LOAD_DUAL) X(STORE_DUAL) X(LDM) X(STM) X(LDM_PC) X(LOAD_PC) \
    X(BRANCH) X(BRANCH_COND) X(BL) X(BX) X(TABLE_BRANCH) X(IT) X(NOP) X(BARRIER) X(SYSTEM) \
    X(FP_ALU) X(FP_MAC) X(FP_DIV) X(FP_LOAD) X(FP_STORE) X(FP_LDM) X(FP_MOV) \
    X(MVE_LOAD) X(MVE_STORE) X(MVE_DP) X(LOOP_START) X(LOOP_END) X(UNKNOWN)

#define AS_ENUM(name) C_##name,
#define AS_NAME(name) #name,
enum insn_class { CLASSES(AS_ENUM) CLASS_COUNT };
static const char *const class_names[CLASS_COUNT] = { CLASSES(AS_NAME) };

/* Issue groups for dual issue (`pair FIRST SECOND` lines name which may issue together). */
#define GROUPS(X) X(none) X(alu) X(shift) X(dsp) X(mul) X(div) X(ls) X(branch) X(fp) X(mve_ls) X(mve_dp)
enum issue_group { GROUPS(AS_ENUM) GROUP_COUNT };
static const char *const group_names[GROUP_COUNT] = { GROUPS(AS_NAME) };

struct class_cost {
    uint32_t base;       /* cycles */
    uint32_t per_reg;    /* more cycles per register transferred (LDM/STM/PUSH/POP/VLDM) */
    uint32_t taken;      /* more cycles when it changes the flow (a taken branch, a write of PC) */
    uint32_t group;      /* issue group */
};

struct params {
    uint32_t load_pipeline;      /* cycles a load/store saves right after an independent load */
    uint32_t agu_stall;          /* cycles a load/store waits for an address register the previous data-processing instruction wrote */
    uint32_t load_use;           /* cycles an instruction waits for the previous load's result */
    uint32_t mul_use;            /* cycles an instruction waits for the previous multiply's result (not as accumulator) */
    uint32_t it_fold;            /* IT after a 16-bit instruction costs nothing */
    uint32_t dual_issue;         /* adjacent pairs of `pair` groups issue in one cycle */
    uint32_t mve_overlap;        /* cycles an MVE instruction overlaps a previous MVE one of the other kind (load/store vs data processing) */
    uint32_t branch_unaligned32; /* more cycles when a taken branch lands on a 32-bit instruction not word-aligned */
    uint32_t mispredict;         /* >0: a 2-bit predictor per branch; a wrong guess costs this instead of the taken cost */
    uint32_t regs_per_cycle;     /* registers a load/store multiple moves a cycle (64-bit buses: 2) */
    uint32_t pair_16bit;         /* dual issue only of two 16-bit instructions */
};

static struct class_cost costs[CLASS_COUNT];
static struct params params;
static uint8_t pairs[GROUP_COUNT][GROUP_COUNT];

/* ---- memory: wait states by address, a fetch line cache and a data cache (or one cache for both) ----
 * A miss fills one line at its region's wait states (the whole line: no critical word first), or at its
 * sequential wait states when it starts where the region's last fill ended (a QSPI burst extended, as
 * RP2350's QMI does within its cooldown; how long the burst stays open is not modelled). Loads that no
 * cache serves pay the wait states per access. */

#define MAX_REGIONS 8
#define MAX_CACHE_LINES 4096

struct region {
    uint64_t lo, hi;    /* [lo, hi) */
    uint32_t waits;     /* wait states of one access (a line fill through a cache) */
    uint32_t icache;    /* code fetches go through the fetch cache */
    uint32_t dcache;    /* loads go through the data cache (the fetch cache when it is shared) */
    uint32_t sequential_waits;  /* a fill of the line after the region's last fill (a burst that goes on) */
    uint64_t fill_end;          /* the address after that last fill, fetch or load; UINT64_MAX: none yet */
};

struct cache {
    uint32_t sets, ways, line_shift;
    uint64_t *tags;     /* sets * ways, most recent first within a set; 0 = empty */
};

static struct region regions[MAX_REGIONS];
static int region_count;
static struct cache icache, dcache;
static struct cache *load_cache = &dcache;   /* &icache after a `cache` line: one cache for fetches and loads */
static uint32_t prefetch;      /* the next sequential fetch line is read ahead while the core runs the last one */
static uint64_t last_fetch_line = UINT64_MAX;

static struct region *region_of(uint64_t addr)
{
    for (int i = 0; i < region_count; i++) {
        if (addr >= regions[i].lo && addr < regions[i].hi) {
            return &regions[i];
        }
    }
    return NULL;
}

/* 1 on a hit; on a miss the line is filled (least recently used way replaced). A cache without sets misses always. */
static int cache_access(struct cache *c, uint64_t addr)
{
    if (c->sets == 0) {
        return 0;
    }
    uint64_t line = (addr >> c->line_shift) + 1;
    uint64_t *set = c->tags + (line % c->sets) * c->ways;
    uint32_t way = 0;
    while (way < c->ways && set[way] != line) {
        way++;
    }
    int hit = way < c->ways;
    if (!hit) {
        way = c->ways - 1;
    }
    memmove(set + 1, set, way * sizeof *set);
    set[0] = line;
    return hit;
}

/* The wait states of filling the `bytes` at `addr` from region r: its sequential waits when they start
 * where its last fill (a fetch's or a load's) ended. */
static uint32_t fill_waits(struct region *r, uint64_t addr, uint32_t bytes)
{
    uint32_t waits = addr == r->fill_end ? r->sequential_waits : r->waits;
    r->fill_end = addr + bytes;
    return waits;
}

/* ---- decoded instructions ---- */

struct insn {
    uint8_t cls;
    uint8_t nregs;
    uint8_t is32;
    uint16_t dst;        /* core registers written */
    uint16_t src;        /* core registers read */
    uint16_t addr;       /* registers an address is computed from (loads/stores) */
    uint16_t late;       /* registers read late: a store's data, a multiply-accumulate's accumulator */
};

#define R(n) ((uint16_t)(1u << ((n) & 15u)))
#define PC_BIT R(15)

static int popcount16(uint32_t v)
{
    return __builtin_popcount(v & 0xFFFFu);
}

static struct insn mk(int cls, uint16_t dst, uint16_t src)
{
    struct insn i = { .cls = (uint8_t)cls, .dst = dst, .src = src };
    return i;
}

static struct insn mem(int cls, uint16_t dst, uint16_t src, uint16_t addr)
{
    struct insn i = mk(cls, dst, (uint16_t)(src | addr));
    i.addr = addr;
    return i;
}

static struct insn decode16(uint32_t h)
{
    uint32_t rd = h & 7u, rm = (h >> 3) & 7u, rn8 = (h >> 8) & 7u;
    if ((h & 0xC000u) == 0x0000u) {                  /* shift, add, sub, mov, cmp */
        if ((h & 0x2000u) == 0x2000u) {              /* MOV/CMP/ADD/SUB Rd,#imm8 */
            return mk(C_ALU, (h & 0x1800u) == 0x0800u ? 0 : R(rn8), R(rn8));
        }
        if ((h & 0x1800u) == 0x1800u) {              /* ADD/SUB register or imm3 */
            return mk(C_ALU, R(rd), (uint16_t)(R(rm) | ((h & 0x0400u) ? 0 : R((h >> 6) & 7u))));
        }
        return mk(C_ALU, R(rd), R(rm));
    }
    if ((h & 0xFC00u) == 0x4000u) {                  /* data processing, register */
        uint32_t op = (h >> 6) & 15u;
        int compare = op == 8 || op == 10 || op == 11;
        return mk(op == 13 ? C_MUL : C_ALU, compare ? 0 : R(rd), (uint16_t)(R(rd) | R(rm)));
    }
    if ((h & 0xFC00u) == 0x4400u) {                  /* special data processing, BX, BLX */
        uint32_t op = (h >> 8) & 3u, rdn = ((h >> 4) & 8u) | rd, rs = (h >> 3) & 15u;
        if (op == 3) {
            return mk(C_BX, (h & 0x80u) ? R(14) : 0, R(rs));
        }
        if (op == 1) {
            return mk(C_ALU, 0, (uint16_t)(R(rdn) | R(rs)));
        }
        return mk(rdn == 15 ? C_ALU_PC : C_ALU, R(rdn), (uint16_t)((op == 0 ? R(rdn) : 0) | R(rs)));
    }
    if ((h & 0xF800u) == 0x4800u) {                  /* LDR literal */
        return mem(C_LOAD, R(rn8), 0, PC_BIT);
    }
    if ((h & 0xF000u) == 0x5000u) {                  /* load/store, register offset */
        uint32_t op = (h >> 9) & 7u, rn = (h >> 3) & 7u, ro = (h >> 6) & 7u;
        if (op <= 2) {
            return mem(C_STORE_REG, 0, R(rd), (uint16_t)(R(rn) | R(ro)));
        }
        return mem(C_LOAD, R(rd), 0, (uint16_t)(R(rn) | R(ro)));
    }
    if ((h & 0xE000u) == 0x6000u || (h & 0xF000u) == 0x8000u) {   /* load/store, immediate offset */
        return (h & 0x0800u) ? mem(C_LOAD, R(rd), 0, R(rm)) : mem(C_STORE, 0, R(rd), R(rm));
    }
    if ((h & 0xF000u) == 0x9000u) {                  /* load/store, SP-relative */
        return (h & 0x0800u) ? mem(C_LOAD, R(rn8), 0, R(13)) : mem(C_STORE, 0, R(rn8), R(13));
    }
    if ((h & 0xF000u) == 0xA000u) {                  /* ADR, ADD Rd,SP,#imm */
        return mk(C_ALU, R(rn8), (h & 0x0800u) ? R(13) : PC_BIT);
    }
    if ((h & 0xF000u) == 0xB000u) {                  /* miscellaneous */
        if ((h & 0x0500u) == 0x0100u) {              /* CBZ, CBNZ */
            return mk(C_BRANCH_COND, 0, R(rd));
        }
        if ((h & 0x0E00u) == 0x0400u) {              /* PUSH */
            struct insn i = mem(C_STM, R(13), (uint16_t)((h & 0xFFu) | ((h & 0x100u) ? R(14) : 0)), R(13));
            i.nregs = (uint8_t)popcount16((h & 0xFFu) | ((h & 0x100u) << 6));
            return i;
        }
        if ((h & 0x0E00u) == 0x0C00u) {              /* POP */
            struct insn i = mem((h & 0x100u) ? C_LDM_PC : C_LDM,
                                (uint16_t)((h & 0xFFu) | R(13) | ((h & 0x100u) ? PC_BIT : 0)), 0, R(13));
            i.nregs = (uint8_t)popcount16((h & 0xFFu) | ((h & 0x100u) << 7));
            return i;
        }
        if ((h & 0x0F00u) == 0x0F00u) {              /* IT and hints */
            return mk((h & 0xFu) ? C_IT : C_NOP, 0, 0);
        }
        if ((h & 0x0F00u) == 0x0E00u) {              /* BKPT */
            return mk(C_SYSTEM, 0, 0);
        }
        if ((h & 0x0FE0u) == 0x0660u) {              /* CPS */
            return mk(C_SYSTEM, 0, 0);
        }
        if ((h & 0x0F00u) == 0x0000u) {              /* ADD/SUB SP,SP,#imm */
            return mk(C_ALU, R(13), R(13));
        }
        return mk(C_ALU, R(rd), R(rm));            /* extend, REV */
    }
    if ((h & 0xF000u) == 0xC000u) {                  /* STM, LDM */
        struct insn i = (h & 0x0800u) ? mem(C_LDM, (uint16_t)((h & 0xFFu) | R(rn8)), 0, R(rn8))
                                      : mem(C_STM, R(rn8), (uint16_t)(h & 0xFFu), R(rn8));
        i.nregs = (uint8_t)popcount16(h & 0xFFu);
        return i;
    }
    if ((h & 0xF000u) == 0xD000u) {                  /* B<c>, UDF, SVC */
        return mk((h & 0x0E00u) == 0x0E00u ? C_SYSTEM : C_BRANCH_COND, 0, 0);
    }
    if ((h & 0xF800u) == 0xE000u) {                  /* B */
        return mk(C_BRANCH, 0, 0);
    }
    return mk(C_UNKNOWN, 0, 0);
}

/* Multiply and multiply-accumulate (hw1 1111 1011 0xxx, ARMv7-M A5.3.16). */
static struct insn decode_multiply(uint32_t hw1, uint32_t hw2)
{
    uint32_t op1 = (hw1 >> 4) & 7u, op2 = (hw2 >> 4) & 3u, rn = hw1 & 15u, ra = hw2 >> 12, rd = (hw2 >> 8) & 15u,
             rm = hw2 & 15u;
    uint16_t src = (uint16_t)(R(rn) | R(rm));
    /* MUL; MLA, MLS; USAD8, USADA8; the DSP multiplies (SMUL<x><y>, SMLA<x><y>, SMUAD, SMLAD, SMMLA, ...) */
    int cls = op1 == 0 ? (ra == 15 && op2 == 0 ? C_MUL : C_MLA) : op1 == 7 ? C_SIMD : C_MAC_DSP;
    struct insn i = mk(cls, R(rd), src);
    if (ra != 15) {
        i.src |= R(ra);
        i.late = R(ra);
    }
    return i;
}

/* Long multiply, long multiply-accumulate, divide (hw1 1111 1011 1xxx, A5.3.17). */
static struct insn decode_long_multiply(uint32_t hw1, uint32_t hw2)
{
    uint32_t op1 = (hw1 >> 4) & 7u, op2 = (hw2 >> 4) & 15u, rn = hw1 & 15u, lo = hw2 >> 12, hi = (hw2 >> 8) & 15u,
             rm = hw2 & 15u;
    uint16_t src = (uint16_t)(R(rn) | R(rm));
    if (op2 == 15 && (op1 == 1 || op1 == 3)) {
        return mk(C_DIV, R(hi), src);
    }
    if (op1 == 0 || op1 == 2) {
        return mk(C_MUL_LONG, (uint16_t)(R(lo) | R(hi)), src);
    }
    struct insn i = mk(C_MAC_LONG, (uint16_t)(R(lo) | R(hi)), (uint16_t)(src | R(lo) | R(hi)));
    i.late = (uint16_t)(R(lo) | R(hi));
    return i;
}

/* Coprocessor space (hw1 111x 11xx): the FPU (coprocessors 10, 11) and MVE (14, 15 and 111x 1111). */
static struct insn decode_coprocessor(uint32_t hw1, uint32_t hw2)
{
    uint32_t coproc = (hw2 >> 8) & 15u, rn = hw1 & 15u;
    int fp = coproc == 10 || coproc == 11;
    if ((hw1 & 0xEF00u) == 0xEF00u) {                /* 111x 1111: vector data processing */
        return mk(C_MVE_DP, 0, 0);
    }
    if ((hw1 & 0xEE00u) == 0xEC00u) {                /* loads, stores, 64-bit transfers */
        int load = (hw1 & 0x10u) != 0;
        if ((hw1 & 0xEFE0u) == 0xEC40u) {            /* VMOV two core registers <-> FP */
            return mk(C_FP_MOV, load ? (uint16_t)(R(hw2 >> 12) | R(rn)) : 0,
                      load ? 0 : (uint16_t)(R(hw2 >> 12) | R(rn)));
        }
        if (!fp) {
            return load ? mem(C_MVE_LOAD, 0, 0, R(rn)) : mem(C_MVE_STORE, 0, 0, R(rn));
        }
        if ((hw1 & 0xFF20u) == 0xED00u) {            /* VLDR, VSTR */
            return load ? mem(C_FP_LOAD, 0, 0, R(rn)) : mem(C_FP_STORE, 0, 0, R(rn));
        }
        struct insn i = mem(C_FP_LDM, (hw1 & 0x20u) ? R(rn) : 0, 0, R(rn));   /* VLDM, VSTM, VPUSH, VPOP */
        i.nregs = (uint8_t)((hw2 & 0x100u) ? (hw2 & 0xFEu) / 2u : hw2 & 0xFFu);
        return i;
    }
    if (!fp) {
        return mk(C_MVE_DP, 0, 0);
    }
    if ((hw1 & 0xFF90u) == 0xEE80u && (hw2 & 0x0F50u) == 0x0B10u) {   /* VDUP Qd, Rt */
        return mk(C_MVE_DP, 0, R(hw2 >> 12));
    }
    if (hw2 & 0x10u) {                               /* VMOV core <-> S or lane, VMRS, VMSR */
        int to_core = (hw1 & 0x10u) != 0;
        uint32_t rt = hw2 >> 12;
        return mk(C_FP_MOV, to_core && rt != 15 ? R(rt) : 0, to_core ? 0 : R(rt));
    }
    uint32_t opc1 = ((hw1 >> 5) & 4u) | ((hw1 >> 4) & 3u), opc2 = hw1 & 15u, opc3 = (hw2 >> 6) & 3u;
    switch (opc1) {
    case 0: case 1: case 5: case 6: return mk(C_FP_MAC, 0, 0);   /* VMLA, VMLS, VNMLA, VNMLS, VFMA, VFMS, VFNMA, VFNMS */
    case 4: return mk(C_FP_DIV, 0, 0);                           /* VDIV */
    case 7: return mk(opc2 == 1 && opc3 == 3 ? C_FP_DIV : C_FP_ALU, 0, 0);   /* VSQRT; VMOV, VABS, VNEG, VCVT, VCMP */
    default: return mk(C_FP_ALU, 0, 0);                          /* VMUL, VNMUL, VADD, VSUB */
    }
}

/* Branches and miscellaneous control (hw1 1111 0xxx, hw2 1xxx; A5.3.4), and Armv8.1-M's loops. */
static struct insn decode_branch(uint32_t hw1, uint32_t hw2)
{
    uint32_t op = (hw1 >> 4) & 0x7Fu;
    if ((hw2 & 0x5000u) == 0x4000u) {                /* Armv8.1-M: DLS, WLS, LE, VCTP, branch future */
        if ((hw1 & 0xFFC0u) == 0xF000u && hw2 == 0xE801u) {
            return mk(C_ALU, 0, R(hw1));             /* VCTP: sets the predicate from a count */
        }
        if ((hw1 & 0xFFCFu) == 0xF00Fu && (hw2 & 0xF001u) == 0xC001u) {
            return mk(C_LOOP_END, R(14), R(14));     /* LE, LETP */
        }
        if ((hw1 & 0xFF80u) == 0xF000u && (hw2 & 0xF001u) == 0xE001u) {
            return mk(C_LOOP_START, R(14), R(hw1));  /* DLS, DLSTP */
        }
        if ((hw1 & 0xFF80u) == 0xF000u && (hw2 & 0xF001u) == 0xC001u) {
            return mk(C_BRANCH_COND, R(14), R(hw1)); /* WLS, WLSTP: skips the loop when the count is 0 */
        }
        return mk(C_SYSTEM, 0, 0);
    }
    if (hw2 & 0x4000u) {                             /* BL */
        return mk(C_BL, R(14), 0);
    }
    if (hw2 & 0x1000u) {                             /* B.W */
        return mk(C_BRANCH, 0, 0);
    }
    if ((op & 0x38u) != 0x38u) {                     /* B<c>.W */
        return mk(C_BRANCH_COND, 0, 0);
    }
    if (op == 0x3Bu) {                               /* DSB, DMB, ISB, CLREX */
        return mk(C_BARRIER, 0, 0);
    }
    if (op == 0x3Au) {                               /* NOP.W and hints */
        return mk(C_NOP, 0, 0);
    }
    return mk(C_SYSTEM, (hw1 & 0x10u) ? 0 : R(hw2 >> 8), (hw1 & 0x10u) ? R(hw1) : 0);   /* MSR, MRS */
}

/* Load/store single (hw1 1111 100x xxx1 / xxx0, A5.3.9-A5.3.12). */
static struct insn decode_load_store_single(uint32_t hw1, uint32_t hw2)
{
    uint32_t rn = hw1 & 15u, rt = hw2 >> 12;
    int load = (hw1 & 0x10u) != 0, reg_offset = !(hw1 & 0x80u) && (hw2 & 0x0FC0u) == 0 && rn != 15,
        writeback = !(hw1 & 0x80u) && (hw2 & 0x0900u) == 0x0900u;
    uint16_t addr = (uint16_t)(R(rn) | (reg_offset ? R(hw2) : 0));
    if (!load) {
        struct insn i = mem(reg_offset ? C_STORE_REG : C_STORE, writeback ? R(rn) : 0, R(rt), addr);
        return i;
    }
    if (rt == 15) {
        return (hw1 & 0x60u) == 0x40u ? mem(C_LOAD_PC, PC_BIT, 0, addr) : mem(C_NOP, 0, 0, addr);   /* LDR PC; PLD */
    }
    return mem(C_LOAD, (uint16_t)(R(rt) | (writeback ? R(rn) : 0)), 0, addr);
}

static struct insn decode32(uint32_t hw1, uint32_t hw2)
{
    uint32_t rn = hw1 & 15u, rd = (hw2 >> 8) & 15u;
    if ((hw1 & 0xEC00u) == 0xEC00u) {
        return decode_coprocessor(hw1, hw2);
    }
    switch ((hw1 >> 11) & 3u) {
    case 1:
        if ((hw1 & 0x0640u) == 0x0000u) {            /* load/store multiple */
            int load = (hw1 & 0x10u) != 0;
            uint16_t list = (uint16_t)hw2, wb = (hw1 & 0x20u) ? R(rn) : 0;
            struct insn i = load ? mem(list & PC_BIT ? C_LDM_PC : C_LDM, (uint16_t)(list | wb), 0, R(rn))
                                 : mem(C_STM, wb, list, R(rn));
            i.nregs = (uint8_t)popcount16(list);
            return i;
        }
        if ((hw1 & 0x0640u) == 0x0040u) {            /* dual, exclusive, table branch */
            if ((hw1 & 0xFFF0u) == 0xE8D0u && (hw2 & 0xFFE0u) == 0xF000u) {
                return mem(C_TABLE_BRANCH, 0, 0, (uint16_t)(R(rn) | R(hw2)));
            }
            if ((hw1 & 0xFFE0u) == 0xE840u || ((hw1 & 0xFFE0u) == 0xE8C0u && (hw2 & 0xC0u) == 0x40u)) {
                return (hw1 & 0x10u) ? mem(C_LOAD, R(hw2 >> 12), 0, R(rn))
                                     : mem(C_STORE, R(rd), R(hw2 >> 12), R(rn));   /* LDREX, STREX */
            }
            struct insn i = (hw1 & 0x10u) ? mem(C_LOAD_DUAL, (uint16_t)(R(hw2 >> 12) | R(rd)), 0, R(rn))
                                          : mem(C_STORE_DUAL, 0, (uint16_t)(R(hw2 >> 12) | R(rd)), R(rn));
            i.nregs = 2;
            return i;
        }
        return mk(C_ALU, (uint16_t)(rd == 15 ? 0 : R(rd)), (uint16_t)(R(rn) | R(hw2)));   /* shifted register */
    case 2:
        if (hw2 & 0x8000u) {
            return decode_branch(hw1, hw2);
        }
        return mk(C_ALU, rd == 15 ? 0 : R(rd), R(rn));   /* data processing, immediate (Rd 15: TST, CMP...) */
    default:
        break;
    }
    /* hw1 1111 1xxx */
    if ((hw1 & 0x0E00u) == 0x0000u || (hw1 & 0x0E00u) == 0x0800u) {
        return decode_load_store_single(hw1, hw2);
    }
    if ((hw1 & 0x0F00u) == 0x0A00u) {                /* data processing, register */
        int parallel = (hw2 & 0xF080u) == 0xF080u || (hw1 & 0x0080u);
        return mk(parallel ? C_SIMD : C_ALU, R(rd), (uint16_t)(R(rn) | R(hw2)));
    }
    if ((hw1 & 0x0F80u) == 0x0B00u) {
        return decode_multiply(hw1, hw2);
    }
    if ((hw1 & 0x0F80u) == 0x0B80u) {
        return decode_long_multiply(hw1, hw2);
    }
    return mk(C_UNKNOWN, 0, 0);
}

static int is_store(int cls)
{
    return cls == C_STORE || cls == C_STORE_REG || cls == C_STORE_DUAL || cls == C_STM || cls == C_FP_STORE ||
           cls == C_MVE_STORE;
}

static struct insn decode(const uint8_t *bytes, size_t size)
{
    uint32_t hw1 = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8;
    struct insn i;
    if (size >= 4) {
        i = decode32(hw1, (uint32_t)bytes[2] | (uint32_t)bytes[3] << 8);
        i.is32 = 1;
    } else {
        i = decode16(hw1);
    }
    if ((i.dst & PC_BIT) && i.cls == C_ALU) {
        i.cls = C_ALU_PC;
    }
    if (is_store(i.cls)) {
        i.late = (uint16_t)(i.src & ~i.addr);
    }
    return i;
}

/* ---- the cost of a translation block ---- */

static int is_data_processing(int cls)
{
    return cls == C_ALU || cls == C_SIMD || cls == C_MUL || cls == C_MLA || cls == C_MAC_DSP ||
           cls == C_MUL_LONG || cls == C_MAC_LONG || cls == C_DIV;
}

static int is_multiply(int cls)
{
    return cls == C_MUL || cls == C_MLA || cls == C_MAC_DSP || cls == C_MUL_LONG || cls == C_MAC_LONG;
}

static int is_single_load(int cls)
{
    return cls == C_LOAD;
}

static int takes_address(int cls)
{
    return cls == C_LOAD || cls == C_STORE || cls == C_STORE_REG || cls == C_LOAD_DUAL || cls == C_STORE_DUAL ||
           cls == C_LDM || cls == C_STM || cls == C_LDM_PC || cls == C_LOAD_PC || cls == C_FP_LOAD ||
           cls == C_FP_STORE || cls == C_FP_LDM || cls == C_MVE_LOAD || cls == C_MVE_STORE || cls == C_TABLE_BRANCH;
}

static int is_mve(int cls)
{
    return cls == C_MVE_LOAD || cls == C_MVE_STORE || cls == C_MVE_DP;
}

/* Cycles of `cur` right after `prev` in the same block (prev NULL: first in the block); `*slot`:
 * the cycle `prev` issued in has room for one more instruction (dual issue). */
static uint32_t pair_cost(const struct insn *prev, const struct insn *cur, int *slot)
{
    const struct class_cost *c = &costs[cur->cls];
    uint32_t per_cycle = params.regs_per_cycle ? params.regs_per_cycle : 1u;
    int32_t cycles = (int32_t)(c->base + c->per_reg * ((cur->nregs + per_cycle - 1u) / per_cycle));
    int32_t floor = c->base ? 1 : 0;
    int stalled = 0;
    if (prev) {
        if (params.load_pipeline && is_single_load(prev->cls) &&
            (cur->cls == C_LOAD || cur->cls == C_STORE || cur->cls == C_STORE_REG) && !(prev->dst & cur->addr)) {
            cycles -= (int32_t)params.load_pipeline;
        }
        if (params.agu_stall && is_data_processing(prev->cls) && takes_address(cur->cls) && (prev->dst & cur->addr)) {
            cycles += (int32_t)params.agu_stall;
            stalled = 1;
        }
        if (params.load_use && (is_single_load(prev->cls) || prev->cls == C_LOAD_DUAL || prev->cls == C_LDM) &&
            (prev->dst & cur->src & ~cur->late)) {
            cycles += (int32_t)params.load_use;
            stalled = 1;
        }
        if (params.mul_use && is_multiply(prev->cls) && (prev->dst & cur->src & ~cur->late)) {
            cycles += (int32_t)params.mul_use;
            stalled = 1;
        }
        if (params.it_fold && cur->cls == C_IT && !prev->is32) {
            floor = cycles = 0;
        }
        if (params.mve_overlap && is_mve(prev->cls) && is_mve(cur->cls) &&
            (prev->cls == C_MVE_DP) != (cur->cls == C_MVE_DP)) {
            cycles -= (int32_t)params.mve_overlap;
        }
    }
    if (cycles < floor) {
        cycles = floor;
    }
    if (params.dual_issue) {
        if (*slot && !stalled && cycles == 1 && prev && pairs[costs[prev->cls].group][c->group] &&
            !(prev->dst & cur->src) && !(prev->dst & PC_BIT) && (!params.pair_16bit || (!prev->is32 && !cur->is32))) {
            *slot = 0;
            return 0;
        }
        *slot = cycles == 1;
    }
    return (uint32_t)cycles;
}

struct block {
    uint64_t start, fallthrough;
    uint64_t code_lo, code_hi;   /* bytes fetched */
    uint32_t insns;
    uint32_t cost;               /* cycles, flow not changed */
    uint32_t taken;              /* more cycles when the next block is not the fall-through */
    uint8_t first_is32;
    uint8_t prediction;          /* 2-bit counter: >= 2 predicts taken */
};

/* ---- run-time state (one vCPU: Cortex-M) ---- */

/* What a span of execution was charged: its cycles hold its fetch and data waits. */
struct counts {
    uint64_t insns, cycles, fetch_waits, data_waits;
};

static void add_counts(struct counts *to, const struct counts *c)
{
    to->insns += c->insns;
    to->cycles += c->cycles;
    to->fetch_waits += c->fetch_waits;
    to->data_waits += c->data_waits;
}

#define COUNTS_FORMAT " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
#define COUNTS_ARGS(c) (c).insns, (c).cycles, (c).fetch_waits, (c).data_waits

static struct counts total;
static const struct block *prev_block;
static FILE *out;
#define MAX_RUNS 64
static uint64_t runs[MAX_RUNS];
static int run_count;
static uint64_t hook_addr = UINT64_MAX, hook_size, layers_addr, layers_count;
static uint64_t putc_addr = UINT64_MAX, putc_size, uart_addr = UINT64_MAX, uart_bytes;

static struct {
    int active;
    uint64_t start, ret;
    struct counts counts;
} inference;

static int is_run(uint64_t addr)
{
    for (int i = 0; i < run_count; i++) {
        if (runs[i] == addr) {
            return 1;
        }
    }
    return 0;
}

static struct {
    int paused;
    uint64_t ret;
    struct counts counts;
} layer;

static void charge(struct counts c)
{
    add_counts(&total, &c);
    if (inference.active) {
        add_counts(&inference.counts, &c);
        if (!layer.paused) {
            add_counts(&layer.counts, &c);
        }
    }
}

static uint32_t branch_cost(struct block *b, int taken, const struct block *next)
{
    uint32_t extra = 0;
    if (params.mispredict) {
        int predicted = b->prediction >= 2;
        if (taken && b->prediction < 3) {
            b->prediction++;
        } else if (!taken && b->prediction > 0) {
            b->prediction--;
        }
        if (predicted != taken) {
            return params.mispredict;
        }
    }
    if (taken) {
        extra = b->taken;
        if (b->taken && (next->start & 2u) && next->first_is32) {
            extra += params.branch_unaligned32;
        }
    }
    return extra;
}

static uint32_t fetch_cost(const struct block *b)
{
    if (region_count == 0) {
        return 0;
    }
    struct region *r = region_of(b->start);
    if (!r || r->waits == 0) {
        return 0;
    }
    uint32_t shift = icache.line_shift ? icache.line_shift : 4u, cycles = 0;
    /* The prefetch reads the line after the last one while the core runs that one, for as many cycles as
     * the block spends on a line's bytes: the core waits out the rest of the read (waits + 1 cycles). */
    uint64_t span = b->code_hi - b->code_lo;
    uint64_t busy = span ? ((uint64_t)b->cost << shift) / span : 0;
    uint32_t prefetched = busy > r->waits ? 0 : r->waits + 1 - (uint32_t)busy;
    for (uint64_t line = b->code_lo >> shift; line <= (b->code_hi - 1) >> shift; line++) {
        int sequential = prefetch && line == last_fetch_line + 1;
        if (!(r->icache && cache_access(&icache, line << shift))) {
            cycles += sequential ? prefetched : fill_waits(r, line << shift, 1u << shift);
        }
        last_fetch_line = line;
    }
    return cycles;
}

static void emit_layer(uint64_t index)
{
    if (out) {
        fprintf(out, "layer %" PRIu64 COUNTS_FORMAT "\n", index, COUNTS_ARGS(layer.counts));
        fflush(out);
    }
}

static void block_exec(unsigned int vcpu, void *userdata)
{
    struct block *b = userdata;
    (void)vcpu;
    if (prev_block) {
        struct block *p = (struct block *)prev_block;
        charge((struct counts){ .insns = p->insns, .cycles = p->cost + branch_cost(p, b->start != p->fallthrough, b) });
    }
    if (inference.active && b->start == inference.ret) {
        inference.active = 0;
        if (out) {
            fprintf(out, "inference %#" PRIx64 COUNTS_FORMAT " %" PRIu64 "\n", inference.start,
                    COUNTS_ARGS(inference.counts), uart_bytes);
            fflush(out);
        }
    } else if (!inference.active && prev_block && is_run(b->start)) {
        inference.active = 1;
        inference.start = b->start;
        inference.ret = prev_block->fallthrough;
        inference.counts = (struct counts){ 0 };
        layer.paused = 0;
        layer.counts = (struct counts){ 0 };
    } else if (b->start == hook_addr && inference.active && prev_block) {
        layer.paused = 1;
        layer.ret = prev_block->fallthrough;
    } else if (layer.paused && b->start == layer.ret) {
        layer.paused = 0;
        layer.counts = (struct counts){ 0 };
    }
    uint32_t waits = fetch_cost(b);
    charge((struct counts){ .cycles = waits, .fetch_waits = waits });
    prev_block = b;
}

static void load_exec(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
    (void)vcpu;
    (void)info;
    (void)userdata;
    struct region *r = region_of(vaddr);
    if (r && r->waits && !(r->dcache && cache_access(load_cache, vaddr))) {
        uint32_t shift = r->dcache ? load_cache->line_shift : 2u;
        uint32_t waits = fill_waits(r, vaddr >> shift << shift, 1u << shift);
        charge((struct counts){ .cycles = waits, .data_waits = waits });
    }
}

static void hook_store_exec(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
    (void)vcpu;
    (void)info;
    (void)userdata;
    if (layer.paused && vaddr >= layers_addr && vaddr < layers_addr + 4u * layers_count) {
        emit_layer((vaddr - layers_addr) / 4u);
    }
}

static void uart_store_exec(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
    (void)vcpu;
    (void)info;
    (void)userdata;
    if (vaddr == uart_addr) {
        uart_bytes++;
    }
}

static void block_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (n == 0) {
        return;
    }
    struct block *b = calloc(1, sizeof *b);
    struct insn prev = { 0 };
    int slot = 0;
    if (!b) {
        return;
    }
    for (size_t k = 0; k < n; k++) {
        struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, k);
        size_t size = qemu_plugin_insn_size(qi);
        uint64_t vaddr = qemu_plugin_insn_vaddr(qi);
        struct insn cur = decode(qemu_plugin_insn_data(qi), size);
        if (k == 0) {
            b->start = b->code_lo = vaddr;
            b->first_is32 = cur.is32;
        }
        b->cost += pair_cost(k ? &prev : NULL, &cur, &slot);
        b->fallthrough = b->code_hi = vaddr + size;
        if (k + 1 == n) {
            b->taken = costs[cur.cls].taken;
        }
        if (region_count && takes_address(cur.cls) && !is_store(cur.cls)) {
            /* MEM_RW: Debian's QEMU 7.2 calls a MEM_R callback for no load */
            qemu_plugin_register_vcpu_mem_cb(qi, load_exec, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
        }
        if (layers_count && (cur.cls == C_STORE || cur.cls == C_STORE_REG) && hook_addr != UINT64_MAX &&
            vaddr >= hook_addr && vaddr < hook_addr + hook_size) {
            qemu_plugin_register_vcpu_mem_cb(qi, hook_store_exec, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
        }
        if (uart_addr != UINT64_MAX && is_store(cur.cls) && vaddr >= putc_addr && vaddr < putc_addr + putc_size) {
            qemu_plugin_register_vcpu_mem_cb(qi, uart_store_exec, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
        }
        prev = cur;
    }
    b->insns = (uint32_t)n;
    b->prediction = 1;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    if (out) {
        if (prev_block) {
            charge((struct counts){ .insns = prev_block->insns, .cycles = prev_block->cost });
            prev_block = NULL;
        }
        fprintf(out, "total" COUNTS_FORMAT "\n", COUNTS_ARGS(total));
        fclose(out);
        out = NULL;
    }
}

/* ---- the table file ---- */

static int lookup(const char *const *names, int count, const char *name)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

static int cache_setup(struct cache *c, uint32_t bytes, uint32_t line, uint32_t ways)
{
    uint32_t shift = 0;
    while ((1u << shift) < line) {
        shift++;
    }
    if (line == 0 || (1u << shift) != line || ways == 0 || bytes < line * ways || bytes / line > MAX_CACHE_LINES) {
        return -1;
    }
    c->line_shift = shift;
    c->ways = ways;
    c->sets = bytes / line / ways;
    c->tags = calloc((size_t)c->sets * ways, sizeof *c->tags);
    return c->tags ? 0 : -1;
}

static int read_params(const char *name, uint32_t value)
{
    static const char *const names[] = { "load_pipeline", "agu_stall", "load_use", "mul_use", "it_fold",
                                         "dual_issue", "mve_overlap", "branch_unaligned32", "mispredict",
                                         "regs_per_cycle", "pair_16bit", "prefetch" };
    uint32_t *fields[] = { &params.load_pipeline, &params.agu_stall, &params.load_use, &params.mul_use,
                           &params.it_fold, &params.dual_issue, &params.mve_overlap, &params.branch_unaligned32,
                           &params.mispredict, &params.regs_per_cycle, &params.pair_16bit, &prefetch };
    int i = lookup(names, (int)(sizeof names / sizeof *names), name);
    if (i < 0) {
        return -1;
    }
    *fields[i] = value;
    return 0;
}

/* One line of the table file; 0, or -1 when it is not understood. */
static int table_line(char *line)
{
    char kind[16], a[32], b[32];
    unsigned long long lo, hi;
    unsigned v1, v2, v3, v4;
    if (line[0] == '#' || line[0] == '\n' || line[0] == '\0') {
        return 0;
    }
    if (sscanf(line, "class %31s %u %u %u %31s", a, &v1, &v2, &v3, b) == 5) {
        int cls = lookup(class_names, CLASS_COUNT, a), group = lookup(group_names, GROUP_COUNT, b);
        if (cls < 0 || group < 0) {
            return -1;
        }
        costs[cls] = (struct class_cost){ v1, v2, v3, (uint32_t)group };
        return 0;
    }
    if (sscanf(line, "param %31s %u", a, &v1) == 2) {
        return read_params(a, v1);
    }
    if (sscanf(line, "pair %31s %31s", a, b) == 2) {
        int g1 = lookup(group_names, GROUP_COUNT, a), g2 = lookup(group_names, GROUP_COUNT, b);
        if (g1 < 0 || g2 < 0) {
            return -1;
        }
        pairs[g1][g2] = 1;
        return 0;
    }
    int fields = sscanf(line, "region %llx %llx %u %u %u %u", &lo, &hi, &v1, &v2, &v3, &v4);
    if (fields >= 5 && region_count < MAX_REGIONS) {
        regions[region_count++] = (struct region){ lo, hi, v1, v2, v3, fields == 6 ? v4 : v1, UINT64_MAX };
        return 0;
    }
    if (sscanf(line, "%15s %u %u %u", kind, &v1, &v2, &v4) == 4 && (!strcmp(kind, "icache") || !strcmp(kind, "dcache"))) {
        return cache_setup(!strcmp(kind, "icache") ? &icache : &dcache, v1, v2, v4);
    }
    if (sscanf(line, "cache %u %u %u", &v1, &v2, &v4) == 3) {
        load_cache = &icache;
        return cache_setup(&icache, v1, v2, v4);
    }
    return -1;
}

static int read_table(const char *path)
{
    char line[256];
    int n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mtk cycles plugin: cannot read table %s\n", path);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        n++;
        if (table_line(line) != 0) {
            fprintf(stderr, "mtk cycles plugin: %s:%d: not understood: %s", path, n, line);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    const char *table = NULL;
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "mtk cycles plugin: argument %s is not NAME=VALUE\n", argv[i]);
            return -1;
        }
        *eq = '\0';
        const char *key = argv[i], *value = eq + 1;
        if (!strcmp(key, "table")) {
            table = value;
        } else if (!strcmp(key, "out")) {
            out = fopen(value, "w");
            if (!out) {
                fprintf(stderr, "mtk cycles plugin: cannot write %s\n", value);
                return -1;
            }
        } else if (!strcmp(key, "run") && run_count < MAX_RUNS) {
            runs[run_count++] = strtoull(value, NULL, 0);
        } else if (!strcmp(key, "hook")) {
            char *comma;
            hook_addr = strtoull(value, &comma, 0);
            hook_size = *comma == ':' ? strtoull(comma + 1, NULL, 0) : 0;
        } else if (!strcmp(key, "putc")) {
            char *colon;
            putc_addr = strtoull(value, &colon, 0);
            putc_size = *colon == ':' ? strtoull(colon + 1, NULL, 0) : 0;
        } else if (!strcmp(key, "uart")) {
            uart_addr = strtoull(value, NULL, 0);
        } else if (!strcmp(key, "layers")) {
            char *comma;
            layers_addr = strtoull(value, &comma, 0);
            layers_count = *comma == ':' ? strtoull(comma + 1, NULL, 0) : 0;
        } else {
            fprintf(stderr, "mtk cycles plugin: unknown argument %s\n", key);
            return -1;
        }
    }
    if (!table || read_table(table) != 0) {
        if (!table) {
            fprintf(stderr, "mtk cycles plugin: table=FILE is required\n");
        }
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, block_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
