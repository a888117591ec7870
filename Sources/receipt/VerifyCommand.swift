import PurchaseVerifier
import ReceiptCrypto
import ReceiptModel
import ReceiptVerifier
import StrictJSON
import Threads

/// `receipt verify`: exit 0 only when the proof is valid.
enum VerifyCommand {
    static let help = """
        Usage: receipt verify [FILE|DIR|-]… --trust ANCHOR [options]

        Verifies a purchase proof (standard input when FILE is - or absent), whichever format it is in: an app
        receipt (DER or base64), StoreKit 2 signed data (a JWS: transaction, renewal info, app transaction), an
        App Store Server Notification body ({"signedPayload": …}) or an iOS 6 transaction receipt (base64 or
        plist). Its signature, its chain to a pinned anchor at its own date (creation, signing or purchase date),
        its content, and what you ask to check.
        Given several files or a directory (its files, sorted by name), verifies them on all cores and prints one
        line per file, in order; with --json, one JSON object per line, each with its "file". A summary line (files,
        valid, invalid, unreadable, skipped) goes to standard error; no file to verify is an error.

        Options:
          --trust FILE        A trust anchor (PEM or DER certificate; repeatable, at least one). Apple's roots:
                              certs/apple/AppleIncRootCertificate.cer (app and iOS 6 receipts),
                              certs/apple/AppleRootCA-G3.cer (StoreKit 2 data and notifications).
          --intermediate FILE An issuer the proof does not carry (repeatable): iOS 6 receipts need
                              certs/apple/AppleITunesStoreCertificationAuthority.cer or AppleWWDRCA.cer.
          --bundle-id ID      Require this bundle id.
          --app-version V     Require this application version (app receipts only).
          --device-id ID      Require the receipt to be bound to this device: a UUID (iOS) or MAC address (macOS)
                              (app receipts only).
          --at RFC3339        Check certificates at this time instead of the proof's own date.
          --json              Print one JSON object: {"valid":…,"status":…,"format":…,"receipt"|"payload"|"error":…}.
          -r, --recursive     In a directory, verify the files of its subdirectories too (sorted, depth first;
                              symbolic links inside it are not followed). Without it, subdirectories are skipped
                              and counted in the summary.
          --max-input-size N, --max-depth N, --max-purchases N, --max-decompressed-size N
                              Change a limit (defaults: 4194304 bytes, 32 levels, 10000, 16777216 bytes).

        Exit status: 0 valid (every receipt), 1 invalid (any), 2 usage error, 3 file error (any).
        """

    /// The options the command accepts.
    static let options = OptionSpec(
        valued: LimitOptions.names.union([
            "--trust", "--intermediate", "--bundle-id", "--app-version", "--device-id", "--at",
        ]), flags: ["--json", "--recursive"], maximumPositionals: .max, aliases: ["-r": "--recursive"])

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(arguments, spec: options)
        var options = VerificationOptions()
        options.bundleID = try parsed.single("--bundle-id")
        options.applicationVersion = try parsed.single("--app-version")
        if let text = try parsed.single("--device-id") {
            guard let device = DeviceIdentifier(text) else {
                throw .usage("--device-id \"\(text)\" is neither a UUID nor a MAC address (e.g. 6c:40:08:b5:94:5e)")
            }
            options.deviceIdentifier = device
        }
        if let text = try parsed.single("--at") {
            guard let time = ReceiptDate(rfc3339: text) else {
                throw .usage("--at \"\(text)\" is not an RFC 3339 time (e.g. 2024-06-05T12:00:00Z)")
            }
            options.validationTime = time
        }
        // Certificates' keys read by OpenSSL's own RSA and EC readers: `receipt verify` makes no keys and no TLS
        // connections, so nothing else of the process sees the methods that reading lends out meanwhile.
        OpenSSLStart.readCertificateKeysDirectly()
        // A directory is listed on a thread of its own while the anchors are loaded (OpenSSL starting up): each
        // takes over a millisecond for a directory of 2,000 files, and neither needs the other.
        let positionals = parsed.positionals
        let recursive = parsed.flag("--recursive")
        let listing = ThreadResult { Batch.listing(positionals, recursive: recursive) }
        let verifier: PurchaseVerifier
        do {
            verifier = try PurchaseVerifier(
                trustAnchors: try Anchors.load(parsed.all("--trust")),
                intermediates: try Anchors.certificates(parsed.all("--intermediate"), option: "--intermediate"),
                limits: try LimitOptions.limits(parsed))
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .rejected("\(error)")
        }
        // Freed by the end of the process rather than on the way back to it.
        defer { KeptUntilExit.keep(verifier, listing) }
        let json = parsed.flag("--json")
        if let listing = listing.value {
            try Batch.verify(listing, named: positionals, with: verifier, options: options, json: json)
            return
        }
        let path = parsed.positionals.first ?? "-"
        let input = try Files.read(path, limit: verifier.receipts.limits.maximumInputSize)
        let format = PurchaseProofFormat.detect(input)
        let result = Result { () throws(PurchaseProofError) in try verifier.verify(input, as: format, options: options)
        }
        if json {
            var line = JSONValue.object(ProofOutput.json(result, format: format)).serializedBytes()
            line.append(UInt8(ascii: "\n"))
            Files.writeStandardOutput(line)
        }
        switch result {
        case .success(let proof):
            if !json { Files.writeStandardOutput(Array(ProofOutput.summary(of: proof).utf8)) }
        case .failure(let error):
            throw .rejected("\(path): \(ProofOutput.failure(error, format: format))")
        }
    }
}
