/* hevc_decoders: decodes the same grid HEIC several ways and times each,
 * for issue 16 ("libavcodec's HEVC decoder needs about half of libde265's
 * time for a 12 MP picture"):
 *
 *   heif-rgb   heif_decode_image(primary, RGB interleaved): what libvips'
 *              heifload asks for (libde265 + grid assembly + YCbCr->RGB)
 *   heif-yuv   heif_decode_image(primary, undefined colourspace/chroma):
 *              libde265 + grid assembly, no colour conversion. libheif 1.15
 *              decodes grid tiles on up to 4 threads of its own by default
 *              (heif_context_set_max_decoding_threads), so heif-* may use
 *              both cores
 *   heif-yuv1  the same with heif_context_set_max_decoding_threads(ctx, 0):
 *              tiles decoded one after the other in the calling thread
 *   av-1t      libavcodec hevc, thread_count 1, the tiles sent back to back
 *              (one decoder, one packet per tile item, receive after each)
 *   av-2f      libavcodec hevc, frame threading with 2 threads, all tiles
 *              sent back to back, then drained
 *   av-2s      libavcodec hevc, slice threading with 2 threads (a tile is one
 *              slice, so this shows that slice threads do not help)
 *
 * The tile bitstreams are taken from the file with a small ISOBMFF parser
 * below (meta/iinf/iloc/iref dimg/iprp ipco+ipma hvcC): every `dimg` tile of
 * the primary `grid` item, in order, with its hvcC as the decoder's
 * extradata (libavcodec reads hvcC and length-prefixed NAL units directly).
 * Before timing, each libavcodec output tile is compared with the libheif
 * YCbCr picture (luma plane, cropped at the grid's edge) and the number of
 * differing samples is printed: both decoders are bit-exact HEVC decoders,
 * so it must be 0.
 *
 * Each run times the methods one after another (same load for all); the
 * report gives the median over RUNS runs of CPU time (CLOCK_PROCESS_CPUTIME_ID,
 * all threads) and wall time per image, and the ratio to heif-yuv.
 *
 *   gcc -O2 -o /tmp/hevc_decoders bench/probes/hevc_decoders.c \
 *       $(pkg-config --cflags --libs libheif libavcodec libavutil)
 *   RUNS=9 /tmp/hevc_decoders bench/corpus/iphone/IMG_0001.HEIC
 */
#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libheif/heif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* minimal ISOBMFF / HEIF item parser                                  */
/* ------------------------------------------------------------------ */
typedef struct { const uint8_t *p; size_t n; } Buf;
#define MAXI 4096
typedef struct {
  uint32_t id; char type[5]; uint64_t off, len; int method;
  int props[32]; int nprops;
} Item;
static Item items[MAXI]; static int nitems;
static const uint8_t *props[1024]; static size_t propsz[1024]; static int nprop;
static uint32_t primary, dimg[MAXI]; static int ndimg;
static const uint8_t *idat_p; static size_t idat_n;

static uint32_t be(const uint8_t *p, int n) { uint32_t v = 0; for (int i = 0; i < n; i++) v = v << 8 | p[i]; return v; }
static Item *item(uint32_t id) {
  for (int i = 0; i < nitems; i++) if (items[i].id == id) return &items[i];
  if (nitems == MAXI) { fprintf(stderr, "too many items\n"); exit(1); }
  memset(&items[nitems], 0, sizeof(Item)); items[nitems].id = id; return &items[nitems++];
}
/* iterate boxes in [p, p+n): calls fn(type, payload, size) */
typedef void (*BoxFn)(const char *t, const uint8_t *b, size_t n);
static void boxes(const uint8_t *p, size_t n, BoxFn fn) {
  size_t i = 0;
  while (i + 8 <= n) {
    uint64_t sz = be(p + i, 4); size_t hdr = 8;
    if (sz == 1) { sz = (uint64_t)be(p + i + 8, 4) << 32 | be(p + i + 12, 4); hdr = 16; }
    else if (sz == 0) sz = n - i;
    if (sz < hdr || i + sz > n) break;
    char t[5] = {0}; memcpy(t, p + i + 4, 4);
    fn(t, p + i + hdr, sz - hdr);
    i += sz;
  }
}
static void iprp_child(const char *t, const uint8_t *b, size_t n) {
  if (!strcmp(t, "ipco")) {
    size_t i = 0;
    while (i + 8 <= n && nprop < 1024) { uint32_t sz = be(b + i, 4); props[nprop] = b + i; propsz[nprop++] = sz; i += sz; }
  } else if (!strcmp(t, "ipma")) {
    int ver = b[0], flags = be(b + 1, 3); const uint8_t *q = b + 4;
    uint32_t cnt = be(q, 4); q += 4;
    for (uint32_t k = 0; k < cnt; k++) {
      uint32_t id = ver < 1 ? be(q, 2) : be(q, 4); q += ver < 1 ? 2 : 4;
      int na = *q++; Item *it = item(id);
      for (int a = 0; a < na; a++) {
        int idx = (flags & 1) ? (be(q, 2) & 0x7fff) : (*q & 0x7f); q += (flags & 1) ? 2 : 1;
        if (it->nprops < 32) it->props[it->nprops++] = idx;
      }
    }
  }
}
static void meta_child(const char *t, const uint8_t *b, size_t n) {
  if (!strcmp(t, "pitm")) primary = b[0] == 0 ? be(b + 4, 2) : be(b + 4, 4);
  else if (!strcmp(t, "idat")) { idat_p = b; idat_n = n; }
  else if (!strcmp(t, "iinf")) {
    int ver = b[0]; const uint8_t *q = b + 4 + (ver == 0 ? 2 : 4), *end = b + n;
    while (q + 8 <= end) {
      uint32_t sz = be(q, 4); const uint8_t *e = q + 8; int ev = e[0];
      if (!memcmp(q + 4, "infe", 4) && ev >= 2) {
        uint32_t id = ev == 2 ? be(e + 4, 2) : be(e + 4, 4);
        const uint8_t *ty = e + 4 + (ev == 2 ? 2 : 4) + 2;
        memcpy(item(id)->type, ty, 4);
      }
      q += sz;
    }
  } else if (!strcmp(t, "iloc")) {
    int ver = b[0]; const uint8_t *q = b + 4;
    int os = q[0] >> 4, ls = q[0] & 15, bs = q[1] >> 4, is = (ver == 1 || ver == 2) ? (q[1] & 15) : 0; q += 2;
    uint32_t cnt = ver < 2 ? be(q, 2) : be(q, 4); q += ver < 2 ? 2 : 4;
    for (uint32_t k = 0; k < cnt; k++) {
      uint32_t id = ver < 2 ? be(q, 2) : be(q, 4); q += ver < 2 ? 2 : 4;
      int method = 0; if (ver == 1 || ver == 2) { method = be(q, 2) & 15; q += 2; }
      q += 2; /* data_reference_index */
      uint64_t base = bs ? be(q, bs) : 0; q += bs;
      int ne = be(q, 2); q += 2;
      Item *it = item(id); it->method = method;
      for (int x = 0; x < ne; x++) {
        q += is; uint64_t off = os ? be(q, os) : 0; q += os; uint64_t len = ls ? be(q, ls) : 0; q += ls;
        if (x == 0) { it->off = base + off; it->len = len; } /* tiles have one extent */
      }
    }
  } else if (!strcmp(t, "iref")) {
    int ver = b[0]; const uint8_t *q = b + 4, *end = b + n; int w = ver == 0 ? 2 : 4;
    while (q + 8 <= end) {
      uint32_t sz = be(q, 4);
      if (!memcmp(q + 4, "dimg", 4)) {
        const uint8_t *r = q + 8; uint32_t from = be(r, w); int c = be(r + w, 2); r += w + 2;
        if (from == primary || ndimg == 0) { ndimg = 0; for (int i = 0; i < c && ndimg < MAXI; i++) dimg[ndimg++] = be(r + i * w, w); }
      }
      q += sz;
    }
  } else if (!strcmp(t, "iprp")) boxes(b, n, iprp_child);
}
static void top(const char *t, const uint8_t *b, size_t n) { if (!strcmp(t, "meta")) boxes(b + 4, n - 4, meta_child); }

/* ------------------------------------------------------------------ */
static double now(clockid_t c) { struct timespec ts; clock_gettime(c, &ts); return ts.tv_sec + ts.tv_nsec / 1e9; }
static int cmpd(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

typedef struct { const uint8_t *data; int size; } Tile;
static Tile tiles[MAXI]; static int ntiles;
static const uint8_t *hvcc; static int hvcc_n;
static int tile_w, tile_h, cols, rows, out_w, out_h;

/* decode all tiles with libavcodec; if ref (libheif Y plane) is given, count mismatching luma samples */
static int av_decode(int threads, int type, const uint8_t *refY, int refStride, long *mismatch) {
  const AVCodec *dec = avcodec_find_decoder(AV_CODEC_ID_HEVC);
  AVCodecContext *c = avcodec_alloc_context3(dec);
  c->extradata = av_mallocz(hvcc_n + AV_INPUT_BUFFER_PADDING_SIZE);
  memcpy(c->extradata, hvcc, hvcc_n); c->extradata_size = hvcc_n;
  c->thread_count = threads; c->thread_type = type;
  if (avcodec_open2(c, dec, NULL) < 0) { fprintf(stderr, "avcodec_open2 failed\n"); exit(1); }
  AVPacket *pkt = av_packet_alloc(); AVFrame *f = av_frame_alloc();
  int got = 0;
  for (int i = 0; i <= ntiles; i++) {
    if (i < ntiles) {
      av_new_packet(pkt, tiles[i].size); memcpy(pkt->data, tiles[i].data, tiles[i].size);
      pkt->pts = i; pkt->flags = AV_PKT_FLAG_KEY;
      if (avcodec_send_packet(c, pkt) < 0) { fprintf(stderr, "send_packet failed on tile %d\n", i); exit(1); }
      av_packet_unref(pkt);
    } else avcodec_send_packet(c, NULL);
    while (avcodec_receive_frame(c, f) == 0) {
      if (refY && mismatch) {
        int t = (int)f->pts, tx = (t % cols) * tile_w, ty = (t / cols) * tile_h;
        for (int y = 0; y < tile_h && ty + y < out_h; y++)
          for (int x = 0; x < tile_w && tx + x < out_w; x++)
            if (f->data[0][y * f->linesize[0] + x] != refY[(ty + y) * refStride + tx + x]) (*mismatch)++;
      }
      got++; av_frame_unref(f);
    }
  }
  av_frame_free(&f); av_packet_free(&pkt); avcodec_free_context(&c);
  return got;
}

static struct heif_image *heif_decode(const char *path, enum heif_colorspace cs, enum heif_chroma ch, int threads) {
  struct heif_context *ctx = heif_context_alloc();
  if (threads >= 0) heif_context_set_max_decoding_threads(ctx, threads);
  struct heif_error e = heif_context_read_from_file(ctx, path, NULL);
  if (e.code) { fprintf(stderr, "libheif: %s\n", e.message); exit(1); }
  struct heif_image_handle *h; heif_context_get_primary_image_handle(ctx, &h);
  struct heif_image *img = NULL;
  e = heif_decode_image(h, &img, cs, ch, NULL);
  if (e.code) { fprintf(stderr, "libheif decode: %s\n", e.message); exit(1); }
  heif_image_handle_release(h); heif_context_free(ctx);
  return img;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s FILE.heic\n", argv[0]); return 2; }
  int runs = getenv("RUNS") ? atoi(getenv("RUNS")) : 7;
  FILE *fp = fopen(argv[1], "rb"); if (!fp) { perror(argv[1]); return 1; }
  fseek(fp, 0, SEEK_END); long n = ftell(fp); fseek(fp, 0, SEEK_SET);
  uint8_t *file = malloc(n); if (fread(file, 1, n, fp) != (size_t)n) return 1; fclose(fp);
  boxes(file, n, top);
  Item *g = item(primary);
  if (strcmp(g->type, "grid")) { fprintf(stderr, "primary item %u is '%s', not a grid\n", primary, g->type); return 1; }
  const uint8_t *gd = g->method == 1 ? idat_p + g->off : file + g->off;
  rows = gd[2] + 1; cols = gd[3] + 1;
  if (gd[1] & 1) { out_w = be(gd + 4, 4); out_h = be(gd + 8, 4); } else { out_w = be(gd + 4, 2); out_h = be(gd + 6, 2); }
  for (int i = 0; i < ndimg; i++) {
    Item *t = item(dimg[i]);
    tiles[ntiles].data = file + t->off; tiles[ntiles].size = (int)t->len; ntiles++;
    for (int k = 0; k < t->nprops; k++) {
      const uint8_t *p = props[t->props[k] - 1];
      if (!memcmp(p + 4, "hvcC", 4)) { hvcc = p + 8; hvcc_n = (int)propsz[t->props[k] - 1] - 8; }
      if (!memcmp(p + 4, "ispe", 4)) { tile_w = be(p + 12, 4); tile_h = be(p + 16, 4); }
    }
  }
  long bytes = 0; for (int i = 0; i < ntiles; i++) bytes += tiles[i].size;
  printf("%s: grid %dx%d of %dx%d tiles -> %dx%d, %d tiles, %ld bytes of HEVC, libheif %s, %s\n",
         argv[1], cols, rows, tile_w, tile_h, out_w, out_h, ntiles, bytes, heif_get_version(), av_version_info());

  /* correctness: libavcodec tiles vs libheif's YCbCr picture */
  struct heif_image *ref = heif_decode(argv[1], heif_colorspace_undefined, heif_chroma_undefined, -1);
  int stride; const uint8_t *Y = heif_image_get_plane_readonly(ref, heif_channel_Y, &stride);
  long mm1 = 0, mm2 = 0;
  int g1 = av_decode(1, 0, Y, stride, &mm1), g2 = av_decode(2, FF_THREAD_FRAME, Y, stride, &mm2);
  printf("check: av-1t %d frames, %ld luma samples differ from libheif; av-2f %d frames, %ld differ\n", g1, mm1, g2, mm2);
  heif_image_release(ref);

  const char *names[] = {"heif-rgb", "heif-yuv", "av-1t", "av-2f", "av-2s", "heif-yuv1"};
  enum { M = 6 };
  double *cpu[M], *wall[M];
  for (int m = 0; m < M; m++) { cpu[m] = calloc(runs, sizeof(double)); wall[m] = calloc(runs, sizeof(double)); }
  for (int r = 0; r < runs; r++) {
    for (int m = 0; m < M; m++) {
      double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
      if (m == 0) heif_image_release(heif_decode(argv[1], heif_colorspace_RGB, heif_chroma_interleaved_RGB, -1));
      if (m == 1) heif_image_release(heif_decode(argv[1], heif_colorspace_undefined, heif_chroma_undefined, -1));
      if (m == 5) heif_image_release(heif_decode(argv[1], heif_colorspace_undefined, heif_chroma_undefined, 0));
      if (m == 2) av_decode(1, 0, NULL, 0, NULL);
      if (m == 3) av_decode(2, FF_THREAD_FRAME, NULL, 0, NULL);
      if (m == 4) av_decode(2, FF_THREAD_SLICE, NULL, 0, NULL);
      cpu[m][r] = now(CLOCK_PROCESS_CPUTIME_ID) - c0; wall[m][r] = now(CLOCK_MONOTONIC) - w0;
    }
  }
  double mc[M], mw[M];
  for (int m = 0; m < M; m++) {
    qsort(cpu[m], runs, sizeof(double), cmpd); qsort(wall[m], runs, sizeof(double), cmpd);
    mc[m] = cpu[m][runs / 2] * 1e3; mw[m] = wall[m][runs / 2] * 1e3;
  }
  printf("%-9s %10s %10s %8s %8s   (median of %d runs, per image)\n", "method", "cpu ms", "wall ms", "cpu/yuv", "wall/yuv", runs);
  for (int m = 0; m < M; m++)
    printf("%-9s %10.1f %10.1f %8.2f %8.2f\n", names[m], mc[m], mw[m], mc[m] / mc[1], mw[m] / mw[1]);
  return 0;
}
