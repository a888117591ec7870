import Glibc
import ReceiptCrypto
import ReceiptSigner

/// `receipt certs create`: a development chain for signing test receipts.
enum CertsCommand {
    static let help = """
        Usage: receipt certs create DIR [--algorithm rsa|ec] [--profile standard|apple-compatible]

        Creates a TEST-ONLY chain in DIR (created if needed): root → intermediate → receipt signer, with their
        private keys (mode 0600). Existing files are never replaced. Never ship these keys or trust this root in
        production; see certs/README.md for a production chain.

        Files: root-ca.pem, root-ca.cer (the root in DER), root-ca.key, intermediate-ca.pem, intermediate-ca.key,
               receipt-signer.pem, receipt-signer.key

        Options:
          --algorithm rsa|ec   RSA-2048 (default) or EC P-256 keys.
          --profile P          standard (default), or apple-compatible: Apple's marker extensions on the
                               intermediate and the signer, for testing clients written against Apple's libraries,
                               which insist on them (still TEST ONLY).
        """

    /// The options the command accepts.
    static let options = OptionSpec(valued: ["--algorithm", "--profile"], maximumPositionals: 2)

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(
            arguments, spec: options)
        guard parsed.positionals.first == "create" else { throw .usage("expected 'certs create DIR'") }
        guard parsed.positionals.count == 2 else { throw .usage("DIR is required") }
        let directory = parsed.positionals[1]
        let algorithmName = try parsed.single("--algorithm") ?? "rsa"
        guard let algorithm = GeneratedKeyAlgorithm(rawValue: algorithmName) else {
            throw .usage("--algorithm must be rsa or ec, not \"\(algorithmName)\"")
        }
        let profileName = try parsed.single("--profile") ?? DevelopmentChain.Profile.standard.rawValue
        guard let profile = DevelopmentChain.Profile(rawValue: profileName) else {
            throw .usage("--profile must be standard or apple-compatible, not \"\(profileName)\"")
        }
        let files: [(name: String, content: [UInt8], mode: mode_t)]
        do {
            let chain = try DevelopmentChain.create(algorithm: algorithm, profile: profile)
            files = [
                ("root-ca.pem", Array(try chain.root.pemEncoded.utf8), 0o644),
                ("root-ca.cer", chain.root.derEncoded, 0o644),
                ("root-ca.key", Array(try chain.rootKey.pkcs8PEM.utf8), 0o600),
                ("intermediate-ca.pem", Array(try chain.intermediate.pemEncoded.utf8), 0o644),
                ("intermediate-ca.key", Array(try chain.intermediateKey.pkcs8PEM.utf8), 0o600),
                ("receipt-signer.pem", Array(try chain.signer.pemEncoded.utf8), 0o644),
                ("receipt-signer.key", Array(try chain.signerKey.pkcs8PEM.utf8), 0o600),
            ]
        } catch {
            throw .rejected("creating the chain failed: \(error)")
        }
        if let failure = Files.makeDirectories(directory) {
            throw .io("cannot create \(directory): \(failure)")
        }
        let paths = files.map { Files.path($0.name, in: directory) }
        if let existing = paths.first(where: Files.exists) {
            throw .io("\(existing) already exists; nothing was written (choose an empty directory)")
        }
        var written: [String] = []
        do {
            for (file, path) in zip(files, paths) {
                try Files.write(file.content, to: path, mode: file.mode, replace: false)
                written.append(path)
            }
        } catch {
            for path in written { unlink(path) }
            throw error
        }
        let summary = """
            Created a TEST-ONLY \(algorithm == .rsa2048 ? "RSA-2048" : "EC P-256") chain in \(directory):
              trust anchor:  root-ca.pem (use with: receipt verify --trust \(paths[0])),
                             root-ca.cer (the same in DER, as Apple's libraries load roots)
              intermediate:  intermediate-ca.pem
              signer:        receipt-signer.pem + receipt-signer.key
            Never ship these keys or trust this root in production.

            """
        Files.writeStandardOutput(Array(summary.utf8))
    }
}
