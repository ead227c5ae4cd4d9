import MediaFormats
import ShareIngestCore

/// Every command of `share` and every option it takes: the one table the
/// parser, the help, the completion scripts, the man page and docs/using-share.md's
/// option tables come from.
enum CommandTable {
    // MARK: Options several commands share

    static let help = OptionSpec.flag("help", short: "h", "show this help and exit")
    static let container = OptionSpec.value(
        "container", "DIR", .path,
        default:
            "$SHARE_CONTAINER, else $XDG_DATA_HOME/share-ingest/container, else $HOME/.local/share/share-ingest/container",
        completion: .directory, "the container")
    static let existingContainer = container.help("the container; it must exist (nothing is created)")
    static let pipeline = OptionSpec.value(
        "pipeline", "NAME|FILE", .text, default: "default", completion: .choicesOrFile(PipelineDefinition.builtinNames),
        "a built-in pipeline (\(PipelineDefinition.builtinNames.joined(separator: ", "))) or a pipeline file")
    static let database = OptionSpec.value(
        "db", "URL", .database,
        "the PostgreSQL database: a postgres:// or postgresql:// URL or key=value settings; the password in PGPASSWORD, PGPASSFILE or PGSERVICE"
    )
    static let databaseFile = OptionSpec.value(
        "db-file", "FILE", .path, "read the --db value from FILE (its first line that is not a # comment)")
    static let isolation = OptionSpec.value(
        "isolation", "MODE", .choice(["process", "process-weaker", "none"]), default: "process",
        "decode in sandboxed helpers (process), also where no confinement can be had (process-weaker), or in this process (none)"
    )
    static let json = OptionSpec.flag("json", "JSON lines on stdout instead of text")
    static let quiet = OptionSpec.flag("quiet", short: "q", "only failures on stderr")
    static let metrics = OptionSpec.value(
        "metrics", "HOST:PORT", .text,
        "serve /metrics, /healthz and /readyz there (:PORT is loopback; port 0: the system chooses)")
    static let logFormat = OptionSpec.value(
        "log-format", "FORMAT", .choice(["plain", "json"]), default: "plain",
        "stderr as plain text or one JSON object per line")
    static let size = OptionSpec.value(
        "size", "PX", .integers(16...4096, count: 4), default: "the pipeline's (360)",
        "the thumbnail's longest side in pixels (16-4096), over the pipeline's; PX,PX,... (at most 4): the smallest is the thumbnail, each larger a preview"
    )
    static let format = OptionSpec.value(
        "format", "FORMAT", .choice(PreviewFormat.allCases.map(\.rawValue)), default: "the pipeline's (jpeg)",
        "the previews' encoding (with a pipeline or --size that makes previews); the thumbnail itself stays a JPEG")
    static let quality = OptionSpec.value(
        "quality", "Q", .integer(1...100), default: "the pipeline's (80)",
        "the thumbnail's and previews' quality (1-100)")
    static let include = OptionSpec.value(
        "include", "GLOB", .glob, repeatable: true,
        "take only files whose path inside the drop matches (repeatable): * within a folder, ** across folders, ?, [a-z]; without a /, the name at any depth (*.jpg); case-sensitive"
    )
    static let exclude = OptionSpec.value(
        "exclude", "GLOB", .glob, repeatable: true,
        "leave out files whose path inside the drop matches (repeatable; exclude wins over --include); each is a skipped item (filtered)"
    )
    static let hidden = OptionSpec.flag("hidden", "take hidden files and folders (a leading dot), skipped otherwise")
    static let takenAfter = OptionSpec.value(
        "taken-after", "DATE", .date,
        "deliver only photos and videos taken at or after DATE (YYYY-MM-DD: its midnight; or ISO 8601), by capturedAt; the others, and items with no capture date, are skipped (outsideDateRange), no copy kept"
    )
    static let takenBefore = OptionSpec.value(
        "taken-before", "DATE", .date,
        "deliver only photos and videos taken before DATE (DATE itself excluded); as --taken-after")
    /// The choices of thumbnails and of files every command that plans batches has.
    static let mediaChoices = [size, format, quality, include, exclude, hidden, takenAfter, takenBefore]

    // MARK: The commands

    static let ingest = CommandSpec(
        "ingest",
        "copy, sniff, thumbnail and probe shared items into the container; write the manifest; print the redirect URL last on stdout",
        usages: [
            "[options] PATH...", "--resume BATCH [options]", "--db URL [options] PATH...",
            "--dry-run [options] PATH...",
        ],
        positionals: [
            PositionalSpec(
                name: "PATH", count: .any,
                help:
                    "a file, or a folder (a drop) walked depth-first in name order; hidden entries skipped (unless --hidden)",
                completion: .file)
        ],
        options: [
            container.help("the container, created if missing"), pipeline,
        ] + mediaChoices + [
            .value(
                "key", "KEY", .text, default: "the pipeline's, else ShareKey-<UUID>",
                "the manifest key: 1-128 of A-Z a-z 0-9 . _ -, no leading dot"),
            .value("scheme", "SCHEME", .text, default: "ShareMedia", "the redirect URL's scheme"),
            .value("text", "STRING", .text, repeatable: true, "shared text (repeatable)"),
            .value("url", "URL", .text, repeatable: true, "a shared link (repeatable)"),
            .value("message", "TEXT", .text, "text that came with the share (v2 message of every entry)"),
            .value("report", "FILE", .path, "write a JSON report of every input to FILE"),
            .value("resume", "BATCH", .text, "finish an interrupted batch (an id or key from share status)"),
            .flag(
                "resume-unfinished",
                "finish the unfinished batch of the same inputs, if there is one (else start a new batch)"),
            .flag(
                "new-batch",
                "start a new batch even if an unfinished batch of the same inputs waits (by default share refuses, exit 75)"
            ),
            .value(
                "max-attempts", "N", .integer(1...100), default: "3",
                "attempts an item may lose through no fault of its own"),
            .value(
                "max-item-size", "SIZE", .size, default: "0 (no limit)",
                "a file larger than SIZE (500M, 8G) fails with tooLarge before anything is copied"),
            .value(
                "max-drop-size", "SIZE", .size, default: "0 (no limit)",
                "when the files given hold more than SIZE together, none is copied (each fails with tooLarge)"),
            database.help("enqueue the batch for share worker processes (PostgreSQL) and wait for it"), databaseFile,
            .flag("no-wait", "with --db: print the batch id and return at once"),
            .value(
                "timeout", "SECONDS", .seconds(0...31_536_000),
                "with --db: stop waiting after SECONDS (exit 75); without it, wait until the batch ends"),
            isolation,
            .flag(
                "dry-run", short: "n",
                "print the plan (items, carried sidecars, possible groups, what would be skipped and why); copy and decode nothing"
            ),
            json.help("JSON lines on stdout: batchStarted, one item per input, batchFinished"), quiet,
            .flag("verbose", short: "v", "also a line on stderr per item delivered (share: ingested: SOURCE -> URL)"),
        ],
        discussion: """
            stderr: a line per failed or skipped item, then a summary; on a terminal, a live progress line too. The redirect URL is the last line of stdout.
            SIGINT or SIGTERM: items in flight finish their stage, then share exits 130 or 143 and prints the --resume command.
            """,
        exits: [
            .success, .partial, .usage, .noInput, .unavailable, .cannotCreate, .temporaryFailure, .interrupted,
            .terminated,
        ])

    static let open = CommandSpec(
        "open", "check and print the manifest a redirect URL names (the host app's side)",
        positionals: [
            PositionalSpec(
                name: "URL", count: .one, help: "a redirect URL, ShareMedia://dataUrl=KEY#media", completion: .none)
        ],
        options: [
            existingContainer,
            .flag("consume", "take the share: its manifest moves to manifests/consumed/ and cannot be opened again"),
        ],
        exits: [.success, .usage, .noInput])

    static let watch = CommandSpec(
        "watch", "ingest every drop (a folder or file) put into INBOX: one batch and manifest per drop, exactly once",
        positionals: [
            PositionalSpec(
                name: "INBOX", count: .one,
                help: "the folder drops are put into; it must not be, hold or lie in the container",
                completion: .directory)
        ],
        options: [
            container.help("the container, created if missing"), pipeline,
        ] + mediaChoices + [
            .value(
                "settle", "SECONDS", .seconds(0...86_400), default: "3",
                "take a drop once its tree has not changed for SECONDS (at once with a .ready file)"),
            .value(
                "on-success", "ACTION", .choice(["move", "delete", "keep"]), default: "move",
                "after its batch what was delivered moves to INBOX/.done/, is deleted, or stays; what was not goes to INBOX/.failed/"
            ),
            .value(
                "report-dir", "DIR", .path, completion: .directory,
                "write <key>.html and <key>.jpg there for every finished batch"),
            .value(
                "max-item-size", "SIZE", .size, default: "8G",
                "a file larger than SIZE fails with tooLarge before anything is copied; 0: no limit"),
            .value(
                "max-drop-size", "SIZE", .size, default: "32G",
                "a drop whose files hold more than SIZE together goes to INBOX/.failed/ whole, uncopied; 0: no limit"),
            database.help("enqueue each drop for share worker processes (PostgreSQL) instead of running it here"),
            databaseFile,
            .flag("once", "process the drops present at start, then exit"), isolation, metrics, logFormat, json, quiet,
        ],
        discussion: """
            SIGINT or SIGTERM: no new drops are taken, items in flight finish their stage; exit 130 or 143 (0 on SIGTERM under systemd).
            """,
        exits: [.success, .usage, .noInput, .unavailable, .cannotCreate, .interrupted, .terminated])

    static let status = CommandSpec(
        "status",
        "list the container's batches (state, counts, key, redirect URL), or with --db the workers and the queue",
        options: [
            existingContainer, database.help("the distributed mode's batches, workers, queue and failures"),
            databaseFile, json,
        ],
        discussion:
            "A batch no process is working on any more (stopped by a signal, a crash or a power cut) shows as interrupted.",
        exits: [.success, .usage, .noInput, .unavailable])

    static let report = CommandSpec(
        "report", "a batch as one HTML page and/or one JPEG contact sheet, for people to look at",
        positionals: [
            PositionalSpec(name: "URL|KEY", count: .one, help: "the batch's redirect URL or key", completion: .none)
        ],
        options: [
            existingContainer,
            .value("html", "FILE", .path, "write the page to FILE (self-contained: thumbnails embedded, no script)"),
            .value("contact-sheet", "FILE.jpg", .path, "write a contact sheet of every thumbnail to FILE.jpg"),
        ],
        discussion:
            "Without --html or --contact-sheet: a text summary on stdout (the counts, each item not delivered with its reason, the redirect URL last).",
        exits: [.success, .usage, .noInput, .cannotCreate])

    static let gc = CommandSpec(
        "gc", "remove the files of shares consumed longer ago than a retention (never an unconsumed share)",
        options: [
            existingContainer,
            .value(
                "older-than", "AGE", .duration, default: "7d",
                "the retention: a number and a unit (7d, 12h, 30m, 45s), or 0"),
            database.help(
                "also delete the database's batches that ended longer ago, with their jobs, and gone workers"),
            databaseFile,
            .flag("dry-run", short: "n", "say what would be removed; remove nothing"),
            .flag("verbose", short: "v", "list each path removed on stdout"),
        ],
        exits: [.success, .usage, .noInput, .unavailable, .cannotCreate])

    static let worker = CommandSpec(
        "worker", "claim and run stage jobs from PostgreSQL (the distributed mode)",
        usages: ["--db URL [options]"],
        options: [
            database.help("the PostgreSQL database (required: --db or --db-file)"), databaseFile,
            .value(
                "stages", "LIST", .list(StageName.allCases.map(\.rawValue)), default: "all",
                "the stages this worker serves, comma-separated: \(StageName.allCases.map(\.rawValue).joined(separator: ", "))"
            ),
            .value("concurrency", "N", .integer(1...64), default: "2", "jobs run at once"),
            .value(
                "lease", "SECONDS", .seconds(1...3600), default: String(format: "%g", StageWorker.Settings().lease),
                "how long a claimed job is held without a heartbeat"),
            .value("name", "NAME", .text, default: "<host>-<pid>", "the worker's name in share status --db"),
            isolation, metrics, logFormat, json, quiet,
        ],
        discussion:
            "SIGINT or SIGTERM: no new jobs, jobs in flight finish their stage; exit 130 or 143 (0 on SIGTERM under systemd).",
        exits: [.success, .usage, .unavailable, .interrupted, .terminated])

    static let migrate = CommandSpec(
        "db migrate", "create or upgrade the PostgreSQL schema (the only command that changes it)",
        usages: ["--db URL"],
        options: [database.help("the PostgreSQL database, as a role that owns it"), databaseFile],
        exits: [.success, .usage, .unavailable])

    static let doctor = CommandSpec(
        "doctor", "what this machine offers the decoder sandbox, and what a real helper gets",
        options: [json],
        discussion:
            "Starts one decoder helper as share ingest would (when run as root, under a uid and gid of their own that no other process has, or as SHARE_HELPER_USER and SHARE_HELPER_GROUP name), and says which.",
        exits: [.success, .partial, .usage, .unavailable])

    static let completion = CommandSpec(
        "completion", "print the completion script of a shell (bash, zsh or fish)",
        positionals: [
            PositionalSpec(
                name: "SHELL", count: .one, help: "bash, zsh or fish", completion: .choices(["bash", "zsh", "fish"]))
        ],
        options: [],
        discussion: """
            bash: share completion bash > /usr/share/bash-completion/completions/share (or source it from ~/.bashrc)
            zsh:  share completion zsh > "${fpath[1]}/_share"
            fish: share completion fish > ~/.config/fish/completions/share.fish
            """,
        exits: [.success, .usage])

    static let man = CommandSpec(
        "man", "print the manual page (share.1, roff), made from this table", options: [],
        discussion: "make install puts it in $(PREFIX)/share/man/man1/share.1.", exits: [.success, .usage])

    static let helpCommand = CommandSpec(
        "help", "describe share or one of its commands",
        positionals: [
            PositionalSpec(
                name: "COMMAND", count: .optional, help: "a command (db migrate: both words)", completion: .commands)
        ],
        options: [.flag("markdown", "the command's options as a Markdown table (docs/using-share.md's)")],
        exits: [.success, .usage])

    static let version = CommandSpec(
        "version", "print the version (also share --version)", options: [], exits: [.success, .usage])

    /// Every command, in the order help lists them.
    static let all: [CommandSpec] = [
        ingest, open, watch, status, report, gc, worker, migrate, doctor, completion, man, helpCommand, version,
    ]

    /// The command called `name` (`db migrate` with its two words).
    static func command(_ name: String) -> CommandSpec? { all.first { $0.name == name } }

    /// The first words of the commands (`db` for `db migrate`).
    static var commandWords: [String] {
        var seen: [String] = []
        for command in all {
            let word = String(command.name.split(separator: " ")[0])
            if !seen.contains(word) { seen.append(word) }
        }
        return seen
    }
}
