import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptSigner
import StrictJSON

/// `receipt sign`: a signing request (JSON) in, a signed receipt out.
enum SignCommand {
    static let help = """
        Usage: receipt sign --key KEY.pem --cert LEAF.pem [--chain CA.pem…] [FILE|-] [-o OUT] [--base64] [--compress]
                            [--format receipt|jws|notification]

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
          --format F     receipt (default): an app receipt. jws: StoreKit 2 signed data instead, one JSON object
                         {"signed_transactions": [JWS…], "signed_renewal_info": [JWS…]}: a signed transaction per
                         purchase and renewal info for the latest period of each subscription, ES256 (the key
                         must be EC P-256) with the certificates in x5c, signedDate = receipt_creation_date,
                         environment from receipt_type (Production unless ProductionSandbox/Sandbox/Xcode).
                         The same purchase JSON as for receipts; a device_id is ignored (said on standard error).
                         Apple's libraries want x5c = leaf, intermediate, root: pass the root with --chain too.
                         notification: an App Store Server Notification V2, written as the body Apple POSTs,
                         {"signedPayload": JWS}, signed as for jws. Its JSON: notification_type, signed_date and
                         bundle_id required; subtype, notification_uuid (random when absent), app_apple_id,
                         bundle_version, environment (Production, Sandbox, Xcode, LocalTesting), status; an
                         optional transaction (a purchase as in in_app, plus app_account_token,
                         revocation_reason, signed_date) and renewal_info (original_transaction_id, product_id,
                         auto_renew_product_id, auto_renew_status, expiration_intent, is_in_billing_retry_period,
                         grace_period_expires_date, price_increase_status, renewal_date, signed_date), each
                         signed into data; or, in place of data, a summary (request_identifier, product_id,
                         storefront_country_codes, succeeded_count, failed_count) as a RENEWAL_EXTENSION SUMMARY.

        Example:
          receipt sign --key dev/receipt-signer.key --cert dev/receipt-signer.pem \\
              --chain dev/intermediate-ca.pem purchase.json -o receipt.der
        """

    /// The options the command accepts.
    static let options = OptionSpec(
        valued: ["--key", "--cert", "--chain", "-o", "--format"], flags: ["--base64", "--compress"],
        maximumPositionals: 1)

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(arguments, spec: options)
        guard let keyPath = try parsed.single("--key") else { throw .usage("--key is required") }
        guard let certificatePath = try parsed.single("--cert") else { throw .usage("--cert is required") }
        let output = try parsed.single("-o")
        let keyFile = try Files.read(keyPath)
        let certificateFile = try Files.read(certificatePath)
        var chainFiles: [[UInt8]] = []
        for path in parsed.all("--chain") { chainFiles.append(try Files.read(path)) }
        let request = try Files.read(parsed.positionals.first ?? "-")

        let format = try parsed.single("--format") ?? "receipt"
        guard ["receipt", "jws", "notification"].contains(format) else {
            throw .usage("--format must be receipt, jws or notification, not \"\(format)\"")
        }
        if format != "receipt" {
            guard !parsed.flag("--base64") && !parsed.flag("--compress") else {
                throw .usage("--base64 and --compress apply to receipts, not to --format \(format)")
            }
            let document =
                format == "jws"
                ? try signedData(request, keyFile, certificateFile, chainFiles)
                : try notification(request, keyFile, certificateFile, chainFiles)
            var line = JSONValue.object(document).serializedBytes()
            line.append(UInt8(ascii: "\n"))
            try write(line, to: output)
            return
        }
        let signed: [UInt8]
        do {
            let credentials = try SigningCredentials(
                keyFile: keyFile, certificateFile: certificateFile, chainFiles: chainFiles)
            signed = try SigningRequest(json: request).signed(
                by: ReceiptSigner(credentials: credentials), compressed: parsed.flag("--compress"))
        } catch {
            throw .rejected("\(error)")
        }
        try write(parsed.flag("--base64") ? Array((Base64.encode(signed) + "\n").utf8) : signed, to: output)
    }

    private static func write(_ bytes: [UInt8], to output: String?) throws(CommandFailure) {
        if let output, output != "-" {
            try Files.write(bytes, to: output)
        } else {
            Files.writeStandardOutput(bytes)
        }
    }

    /// The request's purchases as StoreKit 2 signed transactions, and renewal info for the latest period of each
    /// subscription.
    private static func signedData(
        _ requestJSON: [UInt8], _ keyFile: [UInt8], _ certificateFile: [UInt8], _ chainFiles: [[UInt8]]
    ) throws(CommandFailure) -> JSONObject {
        do {
            let request = try SigningRequest(json: requestJSON)
            if request.deviceIdentifier != nil {
                Files.printError(
                    "receipt sign: device_id ignored: it binds app receipts, and StoreKit 2 data has no device binding")
            }
            let signer = try jwsSigner(keyFile, certificateFile, chainFiles)
            let receipt = request.receipt
            let environment: AppStoreEnvironment =
                switch receipt.receiptType {
                case "ProductionSandbox", "Sandbox": .sandbox
                case "Xcode": .xcode
                default: .production
                }
            var transactions: [JSONValue] = []
            for purchase in receipt.inAppPurchases {
                let payload = SignedTransaction.payload(
                    for: purchase, bundleID: receipt.bundleID, environment: environment,
                    signedDate: receipt.creationDate)
                transactions.append(.string(try signer.sign(payload: payload)))
            }
            var latest: [String: InAppPurchase] = [:]
            for purchase in receipt.inAppPurchases where purchase.expiresDate != nil {
                let key = purchase.originalTransactionID ?? purchase.transactionID
                if let current = latest[key], current.purchaseDate >= purchase.purchaseDate { continue }
                latest[key] = purchase
            }
            var renewals: [JSONValue] = []
            for key in latest.keys.sorted() {
                guard let purchase = latest[key] else { continue }
                let payload = try SignedRenewalInfo.payload(
                    for: purchase, environment: environment, signedDate: receipt.creationDate)
                renewals.append(.string(try signer.sign(payload: payload)))
            }
            return JSONObject(["signed_transactions": .array(transactions), "signed_renewal_info": .array(renewals)])
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .rejected("\(error)")
        }
    }

    /// The App Store Server Notification V2 body for the request: `{"signedPayload": "<JWS>"}`.
    private static func notification(
        _ requestJSON: [UInt8], _ keyFile: [UInt8], _ certificateFile: [UInt8], _ chainFiles: [[UInt8]]
    ) throws(CommandFailure) -> JSONObject {
        let content: NotificationContent
        do {
            content = try NotificationRequest.content(json: requestJSON)
        } catch {
            throw .rejected("\(error)")
        }
        let signer = try jwsSigner(keyFile, certificateFile, chainFiles)
        do {
            return try signer.signNotification(content)
        } catch {
            throw .rejected("\(error)")
        }
    }

    /// An ES256 signer: the key, and the certificate followed by the chain in `x5c`.
    private static func jwsSigner(
        _ keyFile: [UInt8], _ certificateFile: [UInt8], _ chainFiles: [[UInt8]]
    ) throws(CommandFailure) -> JWSSigner {
        do {
            let credentials = try SigningCredentials(
                keyFile: keyFile, certificateFile: certificateFile, chainFiles: chainFiles)
            return try JWSSigner(key: credentials.key, chain: [credentials.certificate] + credentials.chain)
        } catch {
            throw .rejected("\(error)")
        }
    }
}
