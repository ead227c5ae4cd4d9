/* keyframe_probe: times what share's MediaFile/KeyframeDecoder do per video:
 * avformat_open_input, avformat_find_stream_info, then seek to 1 s and decode
 * one keyframe with thread_count=1 and skip_frame=AVDISCARD_NONKEY, counting
 * the video packets read before the first frame comes out. With DRAIN=1 in
 * the environment it sends a drain (avcodec_send_packet(NULL)) right after the
 * keyframe packet, which returns the frame at once.
 *
 *   gcc -O2 -o /tmp/keyframe_probe bench/probes/keyframe_probe.c \
 *       $(pkg-config --cflags --libs libavformat libavcodec libavutil)
 *   /tmp/keyframe_probe bench/corpus/videos/*.MP4
 *   DRAIN=1 /tmp/keyframe_probe bench/corpus/videos/*.MP4
 */
#include <stdlib.h>
#include <string.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/time.h>
#include <stdio.h>
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    AVFormatContext *fc = NULL;
    int64_t t0 = av_gettime_relative();
    if (avformat_open_input(&fc, argv[i], NULL, NULL) < 0) return 1;
    int64_t t1 = av_gettime_relative();
    int vs = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    AVCodecParameters *p = fc->streams[vs]->codecpar;
    int w0 = p->width, h0 = p->height, f0 = p->format;
    avformat_find_stream_info(fc, NULL);
    int64_t t2 = av_gettime_relative();
    /* keyframe decode at 1 s */
    AVStream *st = fc->streams[vs];
    const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
    AVCodecContext *c = avcodec_alloc_context3(dec);
    avcodec_parameters_to_context(c, st->codecpar);
    c->thread_count = 1; c->skip_frame = AVDISCARD_NONKEY;
    avcodec_open2(c, dec, NULL);
    av_seek_frame(fc, vs, (int64_t)(1.0 / av_q2d(st->time_base)), AVSEEK_FLAG_BACKWARD);
    AVPacket *pkt = av_packet_alloc(); AVFrame *fr = av_frame_alloc();
    int pk = 0, sent = 0; int64_t t3 = av_gettime_relative();
    while (av_read_frame(fc, pkt) >= 0) {
      if (pkt->stream_index != vs) { av_packet_unref(pkt); continue; }
      pk++; avcodec_send_packet(c, pkt); av_packet_unref(pkt); if (getenv("DRAIN")) avcodec_send_packet(c, NULL);
      if (avcodec_receive_frame(c, fr) == 0) break;
    }
    int64_t t4 = av_gettime_relative();
    printf("%-28s open %5.1f ms  find_stream_info %6.1f ms (codecpar before: %dx%d fmt %d)  keyframe decode %6.1f ms after %d video packets\n",
      strrchr(argv[i], '/') + 1, (t1-t0)/1e3, (t2-t1)/1e3, w0, h0, f0, (t4-t3)/1e3, pk);
    avcodec_free_context(&c); av_frame_free(&fr); av_packet_free(&pkt);
    avformat_close_input(&fc);
  }
  return 0;
}
