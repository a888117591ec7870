import Foundation
import ReceiptCrypto
import Testing

@Suite("The receipt command, run as a process")
struct CLITests {
    static let realReceipt = "Tests/ReceiptVerifierTests/Vectors/real/tpinappreceipt/receipt-production.der"
    static let appleRoot = "certs/apple/AppleIncRootCertificate.cer"

    func root(_ relative: String) -> String { CLIRunner.packageRoot.appendingPathComponent(relative).path }

    @Test("--version prints the version")
    func version() throws {
        let result = try CLIRunner().run(["--version"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("receipt "))
    }

    @Test("every command has --help", arguments: ["verify", "sign", "inspect", "certs"])
    func help(_ command: String) throws {
        let result = try CLIRunner().run([command, "--help"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("Usage: receipt \(command)"))
    }

    @Test("no command, or an unknown one, is a usage error")
    func usageErrors() throws {
        let runner = try CLIRunner()
        #expect(try runner.run([]).status == 2)
        let unknown = try runner.run(["frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("unknown command"))
        #expect(try runner.run(["verify", "--frob"]).status == 2)
    }

    @Test("certs create writes a chain with private keys readable only by their owner", arguments: ["rsa", "ec"])
    func certsCreate(_ algorithm: String) throws {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", algorithm]).status == 0)
        for name in ["root-ca", "intermediate-ca", "receipt-signer"] {
            let key = try FileManager.default.attributesOfItem(atPath: runner.path("dev/\(name).key"))
            #expect((key[.posixPermissions] as? Int) == 0o600)
            #expect(
                String(decoding: try runner.read("dev/\(name).pem"), as: UTF8.self).hasPrefix(
                    "-----BEGIN CERTIFICATE-----"))
            #expect(
                String(decoding: try runner.read("dev/\(name).key"), as: UTF8.self).hasPrefix(
                    "-----BEGIN PRIVATE KEY-----"))
        }
    }

    @Test("certs create also writes the root in DER, the same certificate as its PEM")
    func certsCreateWritesDERRoot() throws {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", "ec"]).status == 0)
        let pem = try Certificate.load(pemOrDER: runner.read("dev/root-ca.pem"))
        let der = try Certificate(derEncoded: runner.read("dev/root-ca.cer"))
        #expect(pem.first?.derEncoded == der.derEncoded)
    }

    @Test("certs create never replaces existing files")
    func certsCreateRefusesToOverwrite() throws {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev"]).status == 0)
        let before = try runner.read("dev/root-ca.key")
        let again = try runner.run(["certs", "create", "dev"])
        #expect(again.status == 3)
        #expect(again.standardError.contains("already exists"))
        #expect(try runner.read("dev/root-ca.key") == before)
    }

    @Test("certs create makes the directories above its directory that are missing, and names the root to trust")
    func certsCreateMakesMissingDirectories() throws {
        let runner = try CLIRunner()
        let created = try runner.run(["certs", "create", "keys/test/dev/", "--algorithm", "ec"])
        #expect(created.status == 0)
        #expect(created.output.contains("--trust keys/test/dev/root-ca.pem)"), "\(created.output)")
        #expect(try runner.read("keys/test/dev/receipt-signer.key").count > 0)
    }

    @Test("certs create into a path that is a file, or under one, fails with the system's reason and writes nothing")
    func certsCreateOverAFileFails() throws {
        let runner = try CLIRunner()
        try runner.write("taken", "not a directory")
        for directory in ["taken", "taken/dev"] {
            let result = try runner.run(["certs", "create", directory])
            #expect(result.status == 3)
            #expect(
                result.standardError.contains("cannot create \(directory): Not a directory"), "\(result.standardError)")
        }
        #expect(try runner.read("taken") == Array("not a directory".utf8))
    }

    @Test("sign then verify: valid, with the purchases in verifyReceipt's JSON", arguments: ["rsa", "ec"])
    func signAndVerify(_ algorithm: String) throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest(algorithm: algorithm)
        let signed = try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"])
        #expect(signed.status == 0, "\(signed.standardError)")
        let verified = try runner.run(["verify", "receipt.der", "--trust", "dev/root-ca.pem", "--json"])
        #expect(verified.status == 0)
        let output = verified.output
        #expect(
            output.hasPrefix(
                #"{"valid":true,"status":0,"format":"app_receipt","receipt":{"receipt_type":"ProductionSandbox","bundle_id":"com.example.game","application_version":"42","receipt_creation_date":"2024-06-05 12:00:00 Etc/GMT","receipt_creation_date_ms":"1717588800000","in_app":["#
            ))
        #expect(
            output.contains(
                #"{"quantity":"1","product_id":"com.example.pro.monthly","transaction_id":"2000000000000002","original_transaction_id":"2000000000000001","purchase_date":"2024-06-01 09:00:00 Etc/GMT","purchase_date_ms":"1717232400000","expires_date":"2024-07-01 09:00:00 Etc/GMT","expires_date_ms":"1719824400000","web_order_line_item_id":"2000000123357229","is_trial_period":"false","is_in_intro_offer_period":"true"}"#
            ))
        #expect(
            output.contains(
                #"{"quantity":"3","product_id":"com.example.coins100","transaction_id":"2000000000000003","purchase_date":"2024-06-04 18:30:00 Etc/GMT","purchase_date_ms":"1717525800000"}"#
            ))
    }

    @Test("what the CLI signs, openssl cms -verify accepts")
    func openSSLAcceptsCLIOutput() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest(algorithm: "ec")
        #expect(try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"]).status == 0)
        let openssl = try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "cms", "-verify", "-binary", "-inform", "DER", "-in", "receipt.der", "-CAfile", "dev/root-ca.pem",
                "-purpose", "any", "-out", "payload.bin",
            ],
            in: runner.directory)
        #expect(openssl.status == 0, "\(openssl.standardError)")
    }

    @Test("sign and verify work through pipes, in base64")
    func pipesAndBase64() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        let signed = try runner.run(CLIRunner.signArguments + ["-", "--base64"], input: Array(CLIRunner.request.utf8))
        #expect(signed.status == 0)
        #expect(signed.output.hasPrefix("MII"))
        let verified = try runner.run(["verify", "-", "--trust", "dev/root-ca.pem"], input: signed.standardOutput)
        #expect(verified.status == 0)
        #expect(verified.output.hasPrefix("valid: com.example.game 42"))
        #expect(verified.output.contains("com.example.coins100"))
    }

    @Test("the device check accepts the bound device in either case and refuses another")
    func deviceCheck() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        #expect(try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"]).status == 0)
        let base = ["verify", "receipt.der", "--trust", "dev/root-ca.pem", "--device-id"]
        #expect(try runner.run(base + ["956328d9-cc6a-47f4-be40-6953fb0ab6c7"]).status == 0)
        #expect(try runner.run(base + ["956328D9-CC6A-47F4-BE40-6953FB0AB6C7"]).status == 0)
        let other = try runner.run(base + ["00000000-0000-0000-0000-000000000000", "--json"])
        #expect(other.status == 1)
        #expect(other.output.contains(#""code":"device_hash_mismatch""#))
        #expect(try runner.run(base + ["not-a-device"]).status == 2)
    }

    @Test("bundle id and app version checks name what differs")
    func appChecks() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        #expect(try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"]).status == 0)
        let base = ["verify", "receipt.der", "--trust", "dev/root-ca.pem"]
        #expect(try runner.run(base + ["--bundle-id", "com.example.game", "--app-version", "42"]).status == 0)
        let bundle = try runner.run(base + ["--bundle-id", "com.example.other"])
        #expect(bundle.status == 1)
        #expect(bundle.standardError.contains("wrong_bundle_id"))
        #expect(bundle.standardError.contains("com.example.other"))
        let version = try runner.run(base + ["--app-version", "41", "--json"])
        #expect(version.output.contains(#""code":"wrong_app_version""#))
        #expect(version.output.contains(#""status":21003"#))
    }

    @Test("--at moves the certificate check, and a bad time is a usage error")
    func validationTime() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        #expect(try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"]).status == 0)
        let base = ["verify", "receipt.der", "--trust", "dev/root-ca.pem"]
        let late = try runner.run(base + ["--at", "2101-01-01T00:00:00Z", "--json"])
        #expect(late.status == 1)
        #expect(late.output.contains(#""code":"certificate_expired""#))
        #expect(try runner.run(base + ["--at", "yesterday"]).status == 2)
    }

    @Test("a receipt from another chain is invalid with status 21003")
    func wrongAnchor() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        #expect(try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"]).status == 0)
        let result = try runner.run(["verify", "receipt.der", "--trust", root(Self.appleRoot), "--json"])
        #expect(result.status == 1)
        #expect(
            result.output.hasPrefix(
                #"{"valid":false,"status":21003,"format":"app_receipt","error":{"code":"untrusted_chain","message":"#))
    }

    @Test("verify needs a trust anchor and an existing file")
    func verifyArgumentErrors() throws {
        let runner = try CLIRunner()
        let noTrust = try runner.run(["verify", root(Self.realReceipt)])
        #expect(noTrust.status == 2)
        #expect(noTrust.standardError.contains("--trust is required"))
        #expect(try runner.run(["verify", "missing.der", "--trust", root(Self.appleRoot)]).status == 3)
    }

    @Test("a real Apple receipt verifies against the committed Apple root")
    func realAppleReceipt() throws {
        let result = try CLIRunner().run([
            "verify", root(Self.realReceipt), "--trust", root(Self.appleRoot), "--bundle-id", "org.getpure.pure-iphone",
        ])
        #expect(result.status == 0)
        #expect(
            result.output.hasPrefix("valid: org.getpure.pure-iphone 15741 [Production], created 2024-02-23T17:27:16Z"))
        #expect(result.output.contains("in-app purchases: 4"))
    }

    @Test("an iOS 6 transaction receipt is verified as one: through the intermediate it does not carry")
    func legacyReceipt() throws {
        let path = root("Tests/ReceiptVerifierTests/Vectors/real/cargobay/legacy-nonconsumable.b64")
        let without = try CLIRunner().run(["verify", path, "--trust", root(Self.appleRoot), "--json"])
        #expect(without.status == 1)
        #expect(without.output.contains(#""format":"legacy_transaction_receipt","error":{"code":"untrusted_chain""#))
        let with = try CLIRunner().run([
            "verify", path, "--trust", root(Self.appleRoot), "--intermediate",
            root("certs/apple/AppleITunesStoreCertificationAuthority.cer"), "--json",
        ])
        #expect(with.status == 0)
        #expect(with.output.hasPrefix(#"{"valid":true,"status":0,"format":"legacy_transaction_receipt","receipt":{"#))
    }

    @Test("a key that does not match the certificate is refused and no output is written")
    func mismatchedKey() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        let result = try runner.run([
            "sign", "--key", "dev/root-ca.key", "--cert", "dev/receipt-signer.pem", "purchase.json", "-o",
            "receipt.der",
        ])
        #expect(result.status == 1)
        #expect(result.standardError.contains("key_certificate_mismatch"))
        #expect(!runner.exists("receipt.der"))
    }

    @Test("a bad signing request leaves an existing output file untouched")
    func badRequestKeepsOutput() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        try runner.write("receipt.der", "previous content")
        try runner.write(
            "bad.json", #"{"bundle_id": "com.example.game", "receipt_creation_date": "2024-06-05T12:00:00Z",}"#)
        let result = try runner.run(CLIRunner.signArguments + ["bad.json", "-o", "receipt.der"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("not valid JSON"))
        #expect(String(decoding: try runner.read("receipt.der"), as: UTF8.self) == "previous content")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: runner.directory.path).filter {
            $0.hasSuffix(".tmp")
        }
        #expect(leftovers.isEmpty)
    }

    @Test(
        "signing requests missing a required field or with a bad date are refused, naming the field",
        arguments: [
            (#"{"receipt_creation_date": "2024-06-05T12:00:00Z"}"#, "bundle_id"),
            (#"{"bundle_id": "a.b"}"#, "receipt_creation_date"),
            (#"{"bundle_id": "a.b", "receipt_creation_date": "2024-13-05T12:00:00Z"}"#, "receipt_creation_date"),
            (
                #"{"bundle_id": "a.b", "receipt_creation_date": "2024-06-05T12:00:00Z", "in_app": [{"product_id": "p", "purchase_date": "2024-06-05T12:00:00Z"}]}"#,
                "in_app[0].transaction_id"
            ),
            (
                #"{"bundle_id": "a.b", "receipt_creation_date": "2024-06-05T12:00:00Z", "in_app": [{"transaction_id": "1", "purchase_date": "2024-06-05T12:00:00Z"}]}"#,
                "in_app[0].product_id"
            ),
            (
                #"{"bundle_id": "a.b", "receipt_creation_date": "2024-06-05T12:00:00Z", "in_app": [{"product_id": "p", "transaction_id": "1"}]}"#,
                "in_app[0].purchase_date"
            ),
            (
                #"{"bundle_id": "a.b", "receipt_creation_date": "2024-06-05T12:00:00Z", "device_id": "xyz"}"#,
                "device_id"
            ),
        ])
    func invalidRequests(_ request: String, _ field: String) throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest(request: request)
        let result = try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"])
        #expect(result.status == 1)
        #expect(result.standardError.contains(field))
        #expect(!runner.exists("receipt.der"))
    }

    @Test("PKCS#1 RSA and SEC1 EC keys are accepted", arguments: ["rsa", "ec"])
    func traditionalKeyFormats(_ algorithm: String) throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest(algorithm: algorithm)
        let converted = try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            ["pkey", "-in", "dev/receipt-signer.key", "-traditional", "-out", "traditional.key"], in: runner.directory)
        #expect(converted.status == 0)
        let header = algorithm == "rsa" ? "-----BEGIN RSA PRIVATE KEY-----" : "-----BEGIN EC PRIVATE KEY-----"
        #expect(String(decoding: try runner.read("traditional.key"), as: UTF8.self).hasPrefix(header))
        let result = try runner.run([
            "sign", "--key", "traditional.key", "--cert", "dev/receipt-signer.pem", "--chain",
            "dev/intermediate-ca.pem",
            "purchase.json", "-o", "receipt.der",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try runner.run(["verify", "receipt.der", "--trust", "dev/root-ca.pem"]).status == 0)
    }

    @Test("an encrypted key is refused with advice, not a passphrase prompt")
    func encryptedKey() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        let encrypted = try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            ["pkey", "-in", "dev/receipt-signer.key", "-aes256", "-passout", "pass:secret", "-out", "encrypted.key"],
            in: runner.directory)
        #expect(encrypted.status == 0)
        let result = try runner.run([
            "sign", "--key", "encrypted.key", "--cert", "dev/receipt-signer.pem", "purchase.json", "-o", "receipt.der",
        ])
        #expect(result.status == 1)
        #expect(result.standardError.contains("encrypted"))
    }

    @Test("inspect shows everything, says no trust decision was made, and includes undocumented fields")
    func inspect() throws {
        let runner = try CLIRunner()
        let text = try runner.run(["inspect", root(Self.realReceipt)])
        #expect(text.status == 0)
        #expect(text.output.hasPrefix("No trust decision was made"))
        #expect(text.output.contains("field 10 (undocumented, version 1): \"17+\""))
        let json = try runner.run(["inspect", root(Self.realReceipt), "--json"])
        #expect(json.status == 0)
        #expect(json.output.contains(#""trust_decision": "none""#))
        #expect(json.output.contains(#""matches_embedded_signer": true"#))
        #expect(json.output.contains(#""role": "signer""#))
        #expect(json.output.contains(#""value_text": "17+""#))
    }

    @Test("inspect of something that is not a receipt fails with the reason")
    func inspectNotAReceipt() throws {
        let runner = try CLIRunner()
        try runner.write("junk.der", "0 not a receipt")
        let result = try runner.run(["inspect", "junk.der"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("malformed"))
    }

    @Test("sign --compress makes a smaller receipt that verify and inspect read")
    func compressedReceipt() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        #expect(try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "plain.der"]).status == 0)
        #expect(
            try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "small.der", "--compress"]).status == 0)
        let plain = try runner.run(["verify", "plain.der", "--trust", "dev/root-ca.pem", "--json"])
        let small = try runner.run(["verify", "small.der", "--trust", "dev/root-ca.pem", "--json"])
        #expect(small.status == 0)
        #expect(small.output == plain.output)
        let inspected = try runner.run(["inspect", "small.der", "--json"])
        #expect(inspected.output.contains(#""compressed": true"#))
    }

    @Test("several files or a directory are verified in order, one JSON line each, exit 0 only if all are valid")
    func batch() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        try FileManager.default.createDirectory(atPath: runner.path("receipts"), withIntermediateDirectories: true)
        for name in ["b", "a", "c"] {
            #expect(
                try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipts/\(name).der"]).status == 0)
        }
        let all = try runner.run(["verify", "receipts", "--trust", "dev/root-ca.pem", "--json"])
        #expect(all.status == 0)
        let lines = all.output.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.map { $0.hasPrefix(#"{"file":"receipts/"#) } == [true, true, true])
        #expect(lines.map { $0.contains(#""valid":true"#) } == [true, true, true])
        #expect(
            lines.compactMap { $0.split(separator: "\"")[safe: 3] } == [
                "receipts/a.der", "receipts/b.der", "receipts/c.der",
            ])
        var tampered = try runner.read("receipts/b.der")
        tampered[tampered.count - 20] ^= 1
        try Data(tampered).write(to: runner.directory.appendingPathComponent("receipts/b.der"))
        let mixed = try runner.run([
            "verify", "receipts/c.der", "receipts/b.der", "receipts/a.der", "--trust", "dev/root-ca.pem", "--json",
        ])
        #expect(mixed.status == 1)
        let validity = mixed.output.split(separator: "\n").map { $0.contains(#""valid":true"#) }
        #expect(validity == [true, false, true])
        let missing = try runner.run(["verify", "receipts/a.der", "nowhere.der", "--trust", "dev/root-ca.pem"])
        #expect(missing.status == 3)
        #expect(missing.output.contains("nowhere.der: unreadable"))
    }
}

extension Collection {
    fileprivate subscript(safe index: Index) -> Element? { indices.contains(index) ? self[index] : nil }
}

@Suite("receipt certs create profiles")
struct CertificateProfileTests {
    @Test("the apple-compatible profile puts Apple's markers on the intermediate and the signer, standard does not")
    func markers() throws {
        let runner = try CLIRunner()
        #expect(
            try runner.run(["certs", "create", "apple", "--algorithm", "ec", "--profile", "apple-compatible"]).status
                == 0)
        #expect(try runner.run(["certs", "create", "plain", "--algorithm", "ec"]).status == 0)
        for (directory, expected) in [("apple", true), ("plain", false)] {
            let intermediate = try Certificate.load(pemOrDER: runner.read("\(directory)/intermediate-ca.pem"))
            let signer = try Certificate.load(pemOrDER: runner.read("\(directory)/receipt-signer.pem"))
            #expect(intermediate.first?.hasExtension(AppleCertificates.intermediateMarker) == expected)
            #expect(signer.first?.hasExtension(AppleCertificates.signingLeafMarker) == expected)
        }
        #expect(try runner.run(["certs", "create", "other", "--profile", "apple"]).status == 2)
    }
}
