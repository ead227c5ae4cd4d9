// Generated from pipelines/*.json (a test checks they stay identical).
// The embedded defaults let `share` run with no files beside it.
enum BuiltinPipelines {
    static let json: [String: String] = [
        "default": #"""
{
  "name": "default",
  "description": "share-ingest's improved behaviour: content-sniffed types and extensions, thumbnails for images, videos, PDFs and audio covers, v2 manifest, a key per batch.",
  "stages": [
    { "stage": "sniff", "workers": 1 },
    { "stage": "copy", "workers": 2, "fsync": true },
    { "stage": "probe", "workers": 2, "pixelLimit": 100000000, "timeLimit": 30 },
    { "stage": "thumbnail", "workers": 2, "size": 360, "format": "jpeg", "quality": 80,
      "for": ["image", "video", "document", "audio"], "damageTolerance": "truncated", "timeLimit": 30, "posterTime": 1.0 },
    { "stage": "manifest", "schema": "v2", "scheme": "ShareMedia", "pathSpelling": "percentEncoded" }
  ]
}
"""#,
        "share-extension": #"""
{
  "name": "share-extension",
  "description": "What the reference iOS share extension (seed 004) writes: legacy manifest (type 0/1/2), video thumbnails and durations, no image thumbnails; without its bugs.",
  "stages": [
    { "stage": "sniff", "workers": 1 },
    { "stage": "copy", "workers": 2, "fsync": true },
    { "stage": "probe", "workers": 2, "pixelLimit": 100000000, "timeLimit": 30 },
    { "stage": "thumbnail", "workers": 2, "size": 360, "format": "jpeg", "quality": 80,
      "for": ["video"], "damageTolerance": "truncated", "timeLimit": 30, "posterTime": 1.0 },
    { "stage": "manifest", "schema": "legacy", "scheme": "ShareMedia", "pathSpelling": "percentEncoded" }
  ]
}
"""#,
    ]
}
