import ReceiptModel
import ReceiptVerifier
import StrictJSON

/// `receipt verify`: exit 0 only when the receipt is valid.
enum VerifyCommand {
    static let help = """
        Usage: receipt verify [FILE|DIR|-]… --trust ANCHOR [options]

        Verifies an app receipt (DER or base64; standard input when FILE is - or absent): its signature, its
        chain to a pinned anchor at the receipt's creation date, its payload, and what you ask to check.
        Given several files or a directory (its files, sorted by name), verifies them on all cores and prints one
        line per receipt, in order; with --json, one JSON object per line, each with its "file".

        Options:
          --trust FILE        A trust anchor (PEM or DER certificate; repeatable, at least one). Apple's root
                              is certs/apple/AppleIncRootCertificate.cer.
          --bundle-id ID      Require this bundle id.
          --app-version V     Require this application version.
          --device-id ID      Require the receipt to be bound to this device: a UUID (iOS) or MAC address (macOS).
          --at RFC3339        Check certificates at this time instead of the receipt's creation date.
          --json              Print one JSON object: {"valid":…,"status":…,"receipt"|"error":…}.
          --max-input-size N, --max-depth N, --max-purchases N, --max-decompressed-size N
                              Change a limit (defaults: 4194304 bytes, 32 levels, 10000, 16777216 bytes).

        Exit status: 0 valid (every receipt), 1 invalid (any), 2 usage error, 3 file error (any).
        """

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(
            arguments,
            spec: OptionSpec(
                valued: LimitOptions.names.union(["--trust", "--bundle-id", "--app-version", "--device-id", "--at"]),
                flags: ["--json"], maximumPositionals: .max))
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
        let verifier: ReceiptVerifier
        do {
            verifier = try ReceiptVerifier(
                trustAnchors: try Anchors.load(parsed.all("--trust")), limits: try LimitOptions.limits(parsed))
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .usage("\(error)")
        }
        let json = parsed.flag("--json")
        if let batch = try Batch.files(parsed.positionals) {
            try Batch.verify(batch, with: verifier, options: options, json: json)
            return
        }
        let path = parsed.positionals.first ?? "-"
        let input = try Files.read(path, limit: verifier.limits.maximumInputSize)
        do {
            let verified = try verifier.verify(input, options: options)
            if json {
                Files.writeStandardOutput(
                    Array((JSONValue.object(Self.json(.success(verified))).serialized() + "\n").utf8))
            } else {
                Files.writeStandardOutput(Array(HumanReadable.summary(of: verified).utf8))
            }
        } catch {
            if json {
                Files.writeStandardOutput(
                    Array((JSONValue.object(Self.json(.failure(error))).serialized() + "\n").utf8))
                throw CommandFailure(exitCode: .rejected, message: "\(path): invalid: \(error)")
            }
            throw .rejected("\(path): invalid: \(error)")
        }
    }

    /// One verification in verifyReceipt's shape: `{"valid":…,"status":…,"receipt"|"error":…}`.
    static func json(_ result: Result<VerifiedReceipt, ReceiptVerificationError>) -> JSONObject {
        switch result {
        case .success(let verified):
            JSONObject([
                "valid": .bool(true), "status": .integer(0), "receipt": .object(verified.receipt.verifyReceiptJSON),
            ])
        case .failure(let error):
            JSONObject([
                "valid": .bool(false), "status": .integer(error.status),
                "error": .object(
                    JSONObject(["code": .string(error.code.rawValue), "message": .string(error.message)])),
            ])
        }
    }
}
