import ReceiptCrypto

/// Loads the certificates named by `--trust` (and `--intermediate`) options.
enum Anchors {
    static func load(_ paths: [String]) throws(CommandFailure) -> [Certificate] {
        guard !paths.isEmpty else {
            throw .usage("--trust is required: pin the root you trust (e.g. certs/apple/AppleIncRootCertificate.cer)")
        }
        return try certificates(paths, option: "--trust")
    }

    /// The certificates in the files given to `option`.
    static func certificates(_ paths: [String], option: String) throws(CommandFailure) -> [Certificate] {
        var certificates: [Certificate] = []
        for path in paths {
            let bytes = try Files.read(path)
            do {
                certificates += try Certificate.load(pemOrDER: bytes)
            } catch {
                throw .rejected("\(option) \(path): \(error)")
            }
        }
        return certificates
    }
}
