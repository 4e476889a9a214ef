// The fast max-pool kernel's key stores (the walk kernel has its own layout), included where it has defined what
// they use: the groupshared key array g_key of KEYS entries, KEY_UNIT keys per loaded word (2 for fp16, 1 for fp32)
// and LOAD_SLOTS words loaded per thread. Stores the pool keys of a thread's loaded X words, padding (not loaded) as
// INT_MIN, which no key beats.
void store_keys(uint tid, uint x[LOAD_SLOTS], uint inside) {
    [unroll] for (uint i = 0; i < LOAD_SLOTS; ++i) {
        uint k = (tid + WORKGROUP_SIZE * i) * KEY_UNIT;
        bool loaded = (inside >> i & 1u) != 0;
        if (k < KEYS) {
#if DTYPE == DT_F16
            g_key[k] = loaded ? pool_key(x[i] & 0xFFFFu) : int(0x80000000u);
            g_key[k + 1u] = loaded ? pool_key(x[i] >> 16) : int(0x80000000u);
#else
            g_key[k] = loaded ? pool_key(x[i]) : int(0x80000000u);
#endif
        }
    }
}
