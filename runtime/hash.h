/* Hashing of stacks, shared by the sampler's stack table and the spawn
 * contexts, and the generator behind the sampler's jitter and the probe
 * windows' spacing.  Signal-safe: pure arithmetic. */
#ifndef PPW_RUNTIME_HASH_H
#define PPW_RUNTIME_HASH_H

#include <stdint.h>

/* A 64-bit finalizer (MurmurHash3's fmix64). */
static inline uint64_t ppw_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* The next value of a xorshift64 generator (Marsaglia's 13, 7, 17);
 * *state must not be 0. */
static inline uint64_t ppw_xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* seed folded with every frame in order. */
static inline uint64_t ppw_hash_frames(uint64_t seed, const uint64_t *frames, uint32_t n)
{
    uint64_t hash = ppw_mix64(seed);
    for (uint32_t i = 0; i < n; i++)
        hash = ppw_mix64(hash ^ frames[i]);
    return hash;
}

#endif
