// simd_llama_harness.c generates testdata/simd_llama_dots.json: it calls llama.cpp's x86
// vec_dot kernels (ggml-cpu/arch/x86/quants.c, not included here) on random blocks and prints
// JSON {type, n, w, a (hex), bits (the float32 result)}. It is not built by go. To regenerate
// (GCC, -march=native on an AVX-512 machine; GCC fuses a*b+c as llama.cpp's build does):
//
//	G=path/to/llama.cpp/ggml
//	gcc -O2 -march=native -c -I$G/include -I$G/src -I$G/src/ggml-cpu $G/src/ggml-cpu/arch/x86/quants.c
//	gcc -O2 -march=native -I$G/include -I$G/src -I$G/src/ggml-cpu simd_llama_harness.c quants.o -lm
//	./a.out > simd_llama_dots.json
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <immintrin.h>
#include <math.h>
float ggml_table_f32_f16[1 << 16];
float ggml_table_f32_e8m0_half[256];
float ggml_table_f32_ue4m3[256];
void quantize_row_q8_K_ref(const float *x, void *y, int64_t k) { abort(); }
typedef void (*vdot)(int, float *, size_t, const void *, size_t, const void *, size_t, int);
#define D(name) void name(int, float *, size_t, const void *, size_t, const void *, size_t, int);
D(ggml_vec_dot_q4_0_q8_0) D(ggml_vec_dot_q4_1_q8_1) D(ggml_vec_dot_q5_0_q8_0) D(ggml_vec_dot_q5_1_q8_1)
D(ggml_vec_dot_q8_0_q8_0) D(ggml_vec_dot_q2_K_q8_K) D(ggml_vec_dot_q3_K_q8_K) D(ggml_vec_dot_q4_K_q8_K)
D(ggml_vec_dot_q5_K_q8_K) D(ggml_vec_dot_q6_K_q8_K) D(ggml_vec_dot_iq4_nl_q8_0) D(ggml_vec_dot_iq4_xs_q8_K)
D(ggml_vec_dot_mxfp4_q8_0)
static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (uint32_t)rs; }
static float nrm(void) { float s = 0; for (int i = 0; i < 12; i++) s += (rnd() & 0xffff) / 65536.0f; return s - 6; }
static uint16_t h(float f) { return _cvtss_sh(f, 0); }
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void hex(const uint8_t *p, int n) { putchar('"'); for (int i = 0; i < n; i++) printf("%02x", p[i]); putchar('"'); }
// act: 0 = Q8_0, 1 = Q8_1, 2 = Q8_K
static void acts(uint8_t *a, int act, int n) {
  int bs = act == 2 ? 256 : 32, sz = act == 0 ? 34 : act == 1 ? 36 : 292;
  for (int b = 0; b < n / bs; b++) {
    uint8_t *p = a + b * sz;
    int off = act == 0 ? 2 : 4, sum = 0;
    float d = fabsf(nrm()) * 0.02f + 1e-4f;
    for (int i = 0; i < bs; i++) { int8_t q = (int8_t)((int)(rnd() % 255) - 127); p[off + i] = (uint8_t)q; sum += q; }
    if (act == 2) {
      memcpy(p, &d, 4);
      for (int j = 0; j < 16; j++) { int16_t s = 0; for (int i = 0; i < 16; i++) s += (int8_t)p[4 + 16 * j + i]; memcpy(p + 260 + 2 * j, &s, 2); }
    } else {
      put16(p, h(d));
      if (act == 1) put16(p + 2, h(_cvtsh_ss(h(d)) * sum));
    }
  }
}
static void weights(uint8_t *w, int sz, int nb, const int *hf, int nhf, int mx) {
  for (int i = 0; i < sz * nb; i++) w[i] = (uint8_t)rnd();
  for (int b = 0; b < nb; b++) {
    for (int k = 0; k < nhf; k++) put16(w + b * sz + hf[k], h(nrm() * 0.01f));
    if (mx) w[b * sz] = 110 + rnd() % 30;
  }
}
int main(void) {
  for (int i = 0; i < 65536; i++) { uint16_t v = i; ggml_table_f32_f16[i] = _cvtsh_ss(v); }
  for (int e = 0; e < 256; e++) { uint32_t bits = e < 2 ? (0x00200000u << e) : ((uint32_t)(e - 1) << 23); memcpy(&ggml_table_f32_e8m0_half[e], &bits, 4); }
  struct { const char *name; vdot f; int bs, sz, act, hf[2], nhf, mx; } T[] = {
    {"Q4_0", ggml_vec_dot_q4_0_q8_0, 32, 18, 0, {0}, 1, 0}, {"Q4_1", ggml_vec_dot_q4_1_q8_1, 32, 20, 1, {0, 2}, 2, 0},
    {"Q5_0", ggml_vec_dot_q5_0_q8_0, 32, 22, 0, {0}, 1, 0}, {"Q5_1", ggml_vec_dot_q5_1_q8_1, 32, 24, 1, {0, 2}, 2, 0},
    {"Q8_0", ggml_vec_dot_q8_0_q8_0, 32, 34, 0, {0}, 1, 0}, {"IQ4_NL", ggml_vec_dot_iq4_nl_q8_0, 32, 18, 0, {0}, 1, 0},
    {"MXFP4", ggml_vec_dot_mxfp4_q8_0, 32, 17, 0, {0}, 0, 1},
    {"Q2_K", ggml_vec_dot_q2_K_q8_K, 256, 84, 2, {80, 82}, 2, 0}, {"Q3_K", ggml_vec_dot_q3_K_q8_K, 256, 110, 2, {108}, 1, 0},
    {"Q4_K", ggml_vec_dot_q4_K_q8_K, 256, 144, 2, {0, 2}, 2, 0}, {"Q5_K", ggml_vec_dot_q5_K_q8_K, 256, 176, 2, {0, 2}, 2, 0},
    {"Q6_K", ggml_vec_dot_q6_K_q8_K, 256, 210, 2, {208}, 1, 0}, {"IQ4_XS", ggml_vec_dot_iq4_xs_q8_K, 256, 136, 2, {0}, 1, 0},
  };
  static uint8_t w[1 << 16], a[1 << 16];
  int nbs[] = {1, 2, 3, 9};
  printf("[\n");
  int first = 1;
  for (unsigned t = 0; t < sizeof T / sizeof T[0]; t++)
    for (unsigned k = 0; k < sizeof nbs / sizeof nbs[0]; k++)
      for (int rep = 0; rep < 2; rep++) {
        int nb = nbs[k], n = nb * T[t].bs;
        weights(w, T[t].sz, nb, T[t].hf, T[t].nhf, T[t].mx);
        acts(a, T[t].act, n);
        int asz = T[t].act == 0 ? 34 : T[t].act == 1 ? 36 : 292;
        float s;
        T[t].f(n, &s, 0, w, 0, a, 0, 1);
        uint32_t bits; memcpy(&bits, &s, 4);
        printf("%s{\"type\":\"%s\",\"n\":%d,\"w\":", first ? "" : ",\n", T[t].name, n); first = 0;
        hex(w, T[t].sz * nb); printf(",\"a\":"); hex(a, asz * n / (T[t].act == 2 ? 256 : 32)); printf(",\"bits\":%u}", bits);
      }
  printf("\n]\n");
  return 0;
}
