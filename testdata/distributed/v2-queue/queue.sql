--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: share_batches; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.share_batches (
    id uuid NOT NULL,
    key text NOT NULL,
    container text NOT NULL,
    pipeline text NOT NULL,
    message text,
    state text NOT NULL,
    created_at double precision NOT NULL,
    finished_at double precision,
    redirect_url text,
    manifest_path text,
    item_count integer DEFAULT 0 NOT NULL,
    ingested integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    skipped integer DEFAULT 0 NOT NULL,
    drop_name text,
    drop_signature text,
    drop_path text
);


--
-- Name: share_items; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.share_items (
    batch_id uuid NOT NULL,
    idx integer NOT NULL,
    snapshot jsonb NOT NULL,
    finished boolean DEFAULT false NOT NULL
);


--
-- Name: share_jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.share_jobs (
    id bigint NOT NULL,
    batch_id uuid NOT NULL,
    idx integer NOT NULL,
    stage text NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 3 NOT NULL,
    not_before timestamp with time zone DEFAULT now() NOT NULL,
    lease_until timestamp with time zone,
    worker text,
    last_error text,
    finished_at timestamp with time zone
);


--
-- Name: share_jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.share_jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: share_jobs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.share_jobs_id_seq OWNED BY public.share_jobs.id;


--
-- Name: share_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.share_schema (
    version integer NOT NULL
);


--
-- Name: share_jobs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_jobs ALTER COLUMN id SET DEFAULT nextval('public.share_jobs_id_seq'::regclass);


--
-- Data for Name: share_batches; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.share_batches VALUES ('5cb0b55f-3412-476b-94ff-3677a78ca109', 'ShareKey-done', '/tmp/share-v2-queue/container-done', '{"description":"share-ingest''s improved behaviour: content-sniffed types and extensions, thumbnails for images, videos and PDFs, v2 manifest, a key per batch.","name":"default","stages":[{"rejectContradictions":true,"stage":"sniff","workers":1},{"fsync":true,"stage":"copy","workers":2},{"pixelLimit":100000000,"stage":"probe","timeLimit":30,"workers":2},{"damageTolerance":"truncated","for":["image","video","document"],"format":"jpeg","posterTime":1,"quality":80,"size":360,"stage":"thumbnail","timeLimit":30,"workers":2},{"pathSpelling":"percentEncoded","schema":"v2","scheme":"ShareMedia","stage":"manifest"}]}', NULL, 'done', 1796102266.0953803, 1796102266.2552643, 'ShareMedia://dataUrl=ShareKey-done#file', '/tmp/share-v2-queue/container-done/manifests/ShareKey-done.json', 3, 3, 0, 0, NULL, NULL, NULL);
INSERT INTO public.share_batches VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 'ShareKey-inflight', '/tmp/share-v2-queue/container-inflight', '{"description":"share-ingest''s improved behaviour: content-sniffed types and extensions, thumbnails for images, videos and PDFs, v2 manifest, a key per batch.","name":"default","stages":[{"rejectContradictions":true,"stage":"sniff","workers":1},{"fsync":true,"stage":"copy","workers":2},{"pixelLimit":100000000,"stage":"probe","timeLimit":30,"workers":2},{"damageTolerance":"truncated","for":["image","video","document"],"format":"jpeg","posterTime":1,"quality":80,"size":360,"stage":"thumbnail","timeLimit":30,"workers":2},{"pathSpelling":"percentEncoded","schema":"v2","scheme":"ShareMedia","stage":"manifest"}]}', NULL, 'running', 1796102267.327784, NULL, NULL, NULL, 7, 0, 0, 0, NULL, NULL, NULL);


--
-- Data for Name: share_items; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.share_items VALUES ('5cb0b55f-3412-476b-94ff-3677a78ca109', 0, '{"id": "CBAB290D-5927-4490-8C8B-6F5836709C55", "size": 12, "type": "file", "index": 0, "source": {"kind": "file", "name": "note-1.txt", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWRvbmUvbm90ZS0xLnR4dA==", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWRvbmUvbm90ZS0xLnR4dA=="}, "sniffed": {"format": "text", "fileExtension": "txt"}, "version": {"size": 12, "inode": 16234022, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 24584421}, "copyPath": "/tmp/share-v2-queue/container-done/CBAB290D-5927-4490-8C8B-6F5836709C55.txt", "mimeType": "text/plain", "warnings": [], "completed": "thumbnail", "stageSeconds": {"copy": 0.002170081999793183, "probe": 0.000000871998054208234, "sniff": 0.00020189000133541413, "thumbnail": 0.0000003300010575912893}}', true);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 2, '{"id": "7F7E198C-8E4A-43F0-B884-E1DEFD107959", "size": 1855, "type": "image", "index": 2, "width": 600, "height": 400, "source": {"kind": "file", "name": "Screenshot 2026-11-29.png", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L1NjcmVlbnNob3QgMjAyNi0xMS0yOS5wbmc=", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L1NjcmVlbnNob3QgMjAyNi0xMS0yOS5wbmc="}, "sniffed": {"format": "png", "fileExtension": "png"}, "version": {"size": 1855, "inode": 16234029, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 29229357}, "copyPath": "/tmp/share-v2-queue/container-inflight/7F7E198C-8E4A-43F0-B884-E1DEFD107959.png", "mimeType": "image/png", "warnings": [], "completed": "thumbnail", "stageSeconds": {"copy": 0.0014974529985920526, "probe": 0.06501651000144193, "sniff": 0.000028462000045692548, "thumbnail": 0.009064138001122046}, "thumbnailPath": "/tmp/share-v2-queue/container-inflight/thumbnails/7F7E198C-8E4A-43F0-B884-E1DEFD107959.jpg"}', true);
INSERT INTO public.share_items VALUES ('5cb0b55f-3412-476b-94ff-3677a78ca109', 1, '{"id": "7B6A5095-4C49-4874-B6C6-08D658CDF0CC", "size": 12, "type": "file", "index": 1, "source": {"kind": "file", "name": "note-2.txt", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWRvbmUvbm90ZS0yLnR4dA==", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWRvbmUvbm90ZS0yLnR4dA=="}, "sniffed": {"format": "text", "fileExtension": "txt"}, "version": {"size": 12, "inode": 16234023, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 24584421}, "copyPath": "/tmp/share-v2-queue/container-done/7B6A5095-4C49-4874-B6C6-08D658CDF0CC.txt", "mimeType": "text/plain", "warnings": [], "completed": "thumbnail", "stageSeconds": {"copy": 0.0009380319970659912, "probe": 0.0000006610025593545288, "sniff": 0.00002551800207584165, "thumbnail": 0.0000004709982022177428}}', true);
INSERT INTO public.share_items VALUES ('5cb0b55f-3412-476b-94ff-3677a78ca109', 2, '{"id": "6783330C-E679-437B-B01A-E7A5592F2312", "size": 12, "type": "file", "index": 2, "source": {"kind": "file", "name": "note-3.txt", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWRvbmUvbm90ZS0zLnR4dA==", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWRvbmUvbm90ZS0zLnR4dA=="}, "sniffed": {"format": "text", "fileExtension": "txt"}, "version": {"size": 12, "inode": 16234024, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 24584421}, "copyPath": "/tmp/share-v2-queue/container-done/6783330C-E679-437B-B01A-E7A5592F2312.txt", "mimeType": "text/plain", "warnings": [], "completed": "thumbnail", "stageSeconds": {"copy": 0.0013632339978357777, "probe": 0.0000005510009941644967, "sniff": 0.000024717002816032618, "thumbnail": 0.00000026999987312592566}}', true);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 1, '{"id": "DB3E7200-B808-45A3-A1A2-A16A2DAA64A8", "size": 15338, "type": "image", "index": 1, "width": 640, "height": 480, "source": {"kind": "file", "name": "IMG_0002.HEIC", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L0lNR18wMDAyLkhFSUM=", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L0lNR18wMDAyLkhFSUM="}, "sniffed": {"format": "heic", "fileExtension": "heic"}, "version": {"size": 15338, "inode": 16234028, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 28771968}, "copyPath": "/tmp/share-v2-queue/container-inflight/DB3E7200-B808-45A3-A1A2-A16A2DAA64A8.heic", "mimeType": "image/heic", "warnings": [], "completed": "probe", "stageSeconds": {"copy": 0.0009147180026047863, "probe": 0.04355495599884307, "sniff": 0.0000314070020976942}}', false);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 0, '{"id": "8C38E148-DC53-47DB-BF54-9716F0FED045", "size": 35611, "type": "image", "index": 0, "width": 640, "height": 480, "source": {"kind": "file", "name": "IMG_0001.JPG", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L0lNR18wMDAxLkpQRw==", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L0lNR18wMDAxLkpQRw=="}, "sniffed": {"format": "jpeg", "fileExtension": "jpg"}, "version": {"size": 35611, "inode": 16234027, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 28304864}, "copyPath": "/tmp/share-v2-queue/container-inflight/8C38E148-DC53-47DB-BF54-9716F0FED045.jpg", "mimeType": "image/jpeg", "warnings": [], "completed": "thumbnail", "stageSeconds": {"copy": 0.00123922000057064, "probe": 0.044600989000173286, "sniff": 0.00009387899990542792, "thumbnail": 0.03231649000008474}, "thumbnailPath": "/tmp/share-v2-queue/container-inflight/thumbnails/8C38E148-DC53-47DB-BF54-9716F0FED045.jpg"}', true);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 3, '{"id": "1EC2AEE1-5C04-4D65-B5E6-A93DAA20278E", "size": 29334, "type": "video", "index": 3, "width": 240, "height": 320, "source": {"kind": "file", "name": "VID_0003.MP4", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L1ZJRF8wMDAzLk1QNA==", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L1ZJRF8wMDAzLk1QNA=="}, "sniffed": {"format": "mp4", "fileExtension": "mp4"}, "version": {"size": 29334, "inode": 16234030, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 29707797}, "copyPath": "/tmp/share-v2-queue/container-inflight/1EC2AEE1-5C04-4D65-B5E6-A93DAA20278E.mp4", "duration": 2000, "mimeType": "video/mp4", "warnings": [], "completed": "probe", "stageSeconds": {"copy": 0.0009960190000128932, "probe": 0.007018600997980684, "sniff": 0.00008029899981920607}}', false);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 6, '{"id": "3DE2D54C-A8BD-4C49-BC8C-C3EF593D6574", "size": 34710, "type": "image", "index": 6, "width": 640, "height": 480, "source": {"kind": "file", "name": "IMG_0001.JPG", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L2NoYXQvSU1HXzAwMDEuSlBH", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L2NoYXQvSU1HXzAwMDEuSlBH"}, "sniffed": {"format": "jpeg", "fileExtension": "jpg"}, "version": {"size": 34710, "inode": 16234032, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 30865967}, "copyPath": "/tmp/share-v2-queue/container-inflight/3DE2D54C-A8BD-4C49-BC8C-C3EF593D6574.jpg", "mimeType": "image/jpeg", "warnings": [], "completed": "probe", "stageSeconds": {"copy": 0.0007825219981896225, "probe": 0.01739212599932216, "sniff": 0.000017374997696606442}}', false);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 4, '{"id": "F048D73C-89EB-41B2-AF89-6FF5ADB0402B", "size": 191, "type": "file", "index": 4, "source": {"kind": "file", "name": "notes.txt", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L25vdGVzLnR4dA==", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L25vdGVzLnR4dA=="}, "sniffed": {"format": "text", "fileExtension": "txt"}, "version": {"size": 191, "inode": 16234033, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 31461942}, "copyPath": "/tmp/share-v2-queue/container-inflight/F048D73C-89EB-41B2-AF89-6FF5ADB0402B.txt", "mimeType": "text/plain", "warnings": [], "completed": "probe", "stageSeconds": {"copy": 0.0044441980026022065, "probe": 0.000000691001332597807, "sniff": 0.00007791499956510961}}', false);
INSERT INTO public.share_items VALUES ('a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 5, '{"id": "2D205C9D-49C4-4A89-95F5-6FFD03EFE7FC", "size": 693, "type": "file", "index": 5, "source": {"kind": "file", "name": "report.pdf", "path": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L3JlcG9ydC5wZGY=", "shownAs": "L3RtcC9zaGFyZS12Mi1xdWV1ZS9kcm9wLWluZmxpZ2h0L3JlcG9ydC5wZGY="}, "sniffed": {"format": "pdf", "fileExtension": "pdf"}, "version": {"size": 693, "inode": 16234034, "device": 65024, "modifiedSeconds": 1796102266, "modifiedNanoseconds": 31994803}, "copyPath": "/tmp/share-v2-queue/container-inflight/2D205C9D-49C4-4A89-95F5-6FFD03EFE7FC.pdf", "mimeType": "application/pdf", "warnings": [], "completed": "probe", "stageSeconds": {"copy": 0.0011782099973061122, "probe": 0.029697927999222884, "sniff": 0.00003400100104045123}}', false);


--
-- Data for Name: share_jobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.share_jobs VALUES (1, '5cb0b55f-3412-476b-94ff-3677a78ca109', 0, 'sniff', 'done', 1, 3, '2026-12-01 05:17:46.098093+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.228313+00');
INSERT INTO public.share_jobs VALUES (2, '5cb0b55f-3412-476b-94ff-3677a78ca109', 1, 'sniff', 'done', 1, 3, '2026-12-01 05:17:46.098093+00', NULL, 'vm-32261/1', NULL, '2026-12-01 05:17:46.229993+00');
INSERT INTO public.share_jobs VALUES (3, '5cb0b55f-3412-476b-94ff-3677a78ca109', 2, 'sniff', 'done', 1, 3, '2026-12-01 05:17:46.098093+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.230411+00');
INSERT INTO public.share_jobs VALUES (4, '5cb0b55f-3412-476b-94ff-3677a78ca109', 0, 'copy', 'done', 1, 3, '2026-12-01 05:17:46.228313+00', NULL, 'vm-32261/1', NULL, '2026-12-01 05:17:46.23424+00');
INSERT INTO public.share_jobs VALUES (5, '5cb0b55f-3412-476b-94ff-3677a78ca109', 1, 'copy', 'done', 1, 3, '2026-12-01 05:17:46.229993+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.234415+00');
INSERT INTO public.share_jobs VALUES (7, '5cb0b55f-3412-476b-94ff-3677a78ca109', 0, 'probe', 'done', 1, 3, '2026-12-01 05:17:46.23424+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.236399+00');
INSERT INTO public.share_jobs VALUES (6, '5cb0b55f-3412-476b-94ff-3677a78ca109', 2, 'copy', 'done', 1, 3, '2026-12-01 05:17:46.230411+00', NULL, 'vm-32261/1', NULL, '2026-12-01 05:17:46.237848+00');
INSERT INTO public.share_jobs VALUES (8, '5cb0b55f-3412-476b-94ff-3677a78ca109', 1, 'probe', 'done', 1, 3, '2026-12-01 05:17:46.234415+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.238411+00');
INSERT INTO public.share_jobs VALUES (9, '5cb0b55f-3412-476b-94ff-3677a78ca109', 0, 'thumbnail', 'done', 1, 3, '2026-12-01 05:17:46.236399+00', NULL, 'vm-32261/1', NULL, '2026-12-01 05:17:46.241738+00');
INSERT INTO public.share_jobs VALUES (10, '5cb0b55f-3412-476b-94ff-3677a78ca109', 2, 'probe', 'done', 1, 3, '2026-12-01 05:17:46.237848+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.242282+00');
INSERT INTO public.share_jobs VALUES (11, '5cb0b55f-3412-476b-94ff-3677a78ca109', 1, 'thumbnail', 'done', 1, 3, '2026-12-01 05:17:46.238411+00', NULL, 'vm-32261/1', NULL, '2026-12-01 05:17:46.252471+00');
INSERT INTO public.share_jobs VALUES (12, '5cb0b55f-3412-476b-94ff-3677a78ca109', 2, 'thumbnail', 'done', 1, 3, '2026-12-01 05:17:46.242282+00', NULL, 'vm-32261/0', NULL, '2026-12-01 05:17:46.252749+00');
INSERT INTO public.share_jobs VALUES (13, '5cb0b55f-3412-476b-94ff-3677a78ca109', -1, 'manifest', 'done', 1, 3, '2026-12-01 05:17:46.252749+00', NULL, 'vm-32261/1', NULL, '2026-12-01 05:17:46.258122+00');
INSERT INTO public.share_jobs VALUES (14, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 0, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.473618+00');
INSERT INTO public.share_jobs VALUES (15, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 1, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.47564+00');
INSERT INTO public.share_jobs VALUES (16, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 2, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.476821+00');
INSERT INTO public.share_jobs VALUES (17, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 3, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.477955+00');
INSERT INTO public.share_jobs VALUES (19, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 5, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.481693+00');
INSERT INTO public.share_jobs VALUES (20, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 6, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.483261+00');
INSERT INTO public.share_jobs VALUES (18, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 4, 'sniff', 'done', 1, 3, '2026-12-01 05:17:47.330795+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.483208+00');
INSERT INTO public.share_jobs VALUES (21, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 0, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.473618+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.485785+00');
INSERT INTO public.share_jobs VALUES (23, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 2, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.476821+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.489862+00');
INSERT INTO public.share_jobs VALUES (22, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 1, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.47564+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.48998+00');
INSERT INTO public.share_jobs VALUES (24, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 3, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.477955+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.492157+00');
INSERT INTO public.share_jobs VALUES (25, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 5, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.481693+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.4947+00');
INSERT INTO public.share_jobs VALUES (26, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 6, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.483261+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.495578+00');
INSERT INTO public.share_jobs VALUES (27, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 4, 'copy', 'done', 1, 3, '2026-12-01 05:17:47.483208+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.502432+00');
INSERT INTO public.share_jobs VALUES (28, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 0, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.485785+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.543448+00');
INSERT INTO public.share_jobs VALUES (29, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 2, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.489862+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.571591+00');
INSERT INTO public.share_jobs VALUES (31, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 3, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.492157+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.58103+00');
INSERT INTO public.share_jobs VALUES (30, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 1, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.48998+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.588968+00');
INSERT INTO public.share_jobs VALUES (38, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 1, 'thumbnail', 'queued', 0, 3, '2026-12-01 05:17:47.588968+00', NULL, NULL, NULL, NULL);
INSERT INTO public.share_jobs VALUES (33, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 6, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.495578+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.609293+00');
INSERT INTO public.share_jobs VALUES (39, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 6, 'thumbnail', 'queued', 0, 3, '2026-12-01 05:17:47.609293+00', NULL, NULL, NULL, NULL);
INSERT INTO public.share_jobs VALUES (34, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 4, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.502432+00', NULL, 'vm-32292/0', NULL, '2026-12-01 05:17:47.612836+00');
INSERT INTO public.share_jobs VALUES (40, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 4, 'thumbnail', 'queued', 0, 3, '2026-12-01 05:17:47.612836+00', NULL, NULL, NULL, NULL);
INSERT INTO public.share_jobs VALUES (32, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 5, 'probe', 'done', 1, 3, '2026-12-01 05:17:47.4947+00', NULL, 'vm-32292/1', NULL, '2026-12-01 05:17:47.616755+00');
INSERT INTO public.share_jobs VALUES (41, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 5, 'thumbnail', 'queued', 0, 3, '2026-12-01 05:17:47.616755+00', NULL, NULL, NULL, NULL);
INSERT INTO public.share_jobs VALUES (35, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 0, 'thumbnail', 'done', 1, 3, '2026-12-01 05:17:47.543448+00', NULL, 'vm-32338/0', NULL, '2026-12-01 05:17:48.996384+00');
INSERT INTO public.share_jobs VALUES (36, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 2, 'thumbnail', 'done', 1, 3, '2026-12-01 05:17:47.571591+00', NULL, 'vm-32338/0', NULL, '2026-12-01 05:17:49.207773+00');
INSERT INTO public.share_jobs VALUES (37, 'a4ba5728-b7cc-48e1-bfdf-5c997ce471b3', 3, 'thumbnail', 'running', 1, 3, '2026-12-01 05:17:47.58103+00', '2026-12-01 05:18:19.208943+00', 'vm-32338/0', NULL, NULL);


--
-- Data for Name: share_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.share_schema VALUES (1);
INSERT INTO public.share_schema VALUES (2);


--
-- Name: share_jobs_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.share_jobs_id_seq', 41, true);


--
-- Name: share_batches share_batches_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_batches
    ADD CONSTRAINT share_batches_key_key UNIQUE (key);


--
-- Name: share_batches share_batches_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_batches
    ADD CONSTRAINT share_batches_pkey PRIMARY KEY (id);


--
-- Name: share_items share_items_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_items
    ADD CONSTRAINT share_items_pkey PRIMARY KEY (batch_id, idx);


--
-- Name: share_jobs share_jobs_batch_id_idx_stage_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_jobs
    ADD CONSTRAINT share_jobs_batch_id_idx_stage_key UNIQUE (batch_id, idx, stage);


--
-- Name: share_jobs share_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_jobs
    ADD CONSTRAINT share_jobs_pkey PRIMARY KEY (id);


--
-- Name: share_jobs_queued; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX share_jobs_queued ON public.share_jobs USING btree (stage, not_before) WHERE (state = 'queued'::text);


--
-- Name: share_jobs_running; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX share_jobs_running ON public.share_jobs USING btree (lease_until) WHERE (state = 'running'::text);


--
-- Name: share_items share_items_batch_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_items
    ADD CONSTRAINT share_items_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES public.share_batches(id) ON DELETE CASCADE;


--
-- Name: share_jobs share_jobs_batch_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.share_jobs
    ADD CONSTRAINT share_jobs_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES public.share_batches(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


