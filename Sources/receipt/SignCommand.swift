import ReceiptDER
import ReceiptSigner

/// `receipt sign`: a signing request (JSON) in, a signed receipt out.
enum SignCommand {
    static let help = """
        Usage: receipt sign --key KEY.pem --cert LEAF.pem [--chain CA.pem…] [FILE|-] [-o OUT] [--base64] [--compress]

        Signs a receipt described in JSON (standard input when FILE is - or absent), in verifyReceipt's
        vocabulary: bundle_id and receipt_creation_date are required, dates are RFC 3339 or *_ms, and in_app
        lists purchases (product_id, transaction_id, purchase_date required). An optional device_id (UUID or
        MAC address) binds the receipt to a device with a random opaque value and its SHA-1 hash.

        Options:
          --key FILE     The signer's private key: PKCS#8, PKCS#1 RSA or SEC1 EC, PEM or DER (not encrypted).
          --cert FILE    The signer's certificate (PEM may also hold the chain after it).
          --chain FILE   Certificates written after the signer's, intermediate first (repeatable).
          -o FILE        Write here (atomically; nothing is written on failure) instead of standard output.
          --base64       Write base64 text instead of DER.
          --compress     Compress the payload (CMS CompressedData, zlib) before signing: much smaller for long
                         subscription histories, but only this project's verifier reads it (Apple's tools do not).

        Example:
          receipt sign --key dev/receipt-signer.key --cert dev/receipt-signer.pem \\
              --chain dev/intermediate-ca.pem purchase.json -o receipt.der
        """

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(
            arguments,
            spec: OptionSpec(
                valued: ["--key", "--cert", "--chain", "-o"], flags: ["--base64", "--compress"], maximumPositionals: 1))
        guard let keyPath = try parsed.single("--key") else { throw .usage("--key is required") }
        guard let certificatePath = try parsed.single("--cert") else { throw .usage("--cert is required") }
        let output = try parsed.single("-o")
        let keyFile = try Files.read(keyPath)
        let certificateFile = try Files.read(certificatePath)
        var chainFiles: [[UInt8]] = []
        for path in parsed.all("--chain") { chainFiles.append(try Files.read(path)) }
        let request = try Files.read(parsed.positionals.first ?? "-")

        let signed: [UInt8]
        do {
            let credentials = try SigningCredentials(
                keyFile: keyFile, certificateFile: certificateFile, chainFiles: chainFiles)
            signed = try SigningRequest(json: request).signed(
                by: ReceiptSigner(credentials: credentials), compressed: parsed.flag("--compress"))
        } catch {
            throw .rejected("\(error)")
        }
        let bytes = parsed.flag("--base64") ? Array((Base64.encode(signed) + "\n").utf8) : signed
        if let output, output != "-" {
            try Files.write(bytes, to: output)
        } else {
            Files.writeStandardOutput(bytes)
        }
    }
}
