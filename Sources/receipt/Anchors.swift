import ReceiptCrypto

/// Loads the trust anchors named by `--trust` options.
enum Anchors {
    static func load(_ paths: [String]) throws(CommandFailure) -> [Certificate] {
        guard !paths.isEmpty else {
            throw .usage("--trust is required: pin the root you trust (e.g. certs/apple/AppleIncRootCertificate.cer)")
        }
        var certificates: [Certificate] = []
        for path in paths {
            let bytes = try Files.read(path)
            do {
                certificates += try Certificate.load(pemOrDER: bytes)
            } catch {
                throw .usage("--trust \(path): \(error)")
            }
        }
        return certificates
    }
}
