import Foundation
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// Which receipts a service takes, by `receipt_type` (field 0), exactly as written.
@Suite("POST /verifyReceipt takes only the receipt types of its environment")
struct ReceiptTypeRuleTests {
    /// The verifyReceipt status and error code a service of `environment` answers for a receipt of `type`.
    func answer(_ type: String?, environment: ServiceConfiguration.Environment) throws -> (JSONValue?, JSONValue?) {
        let fixture = try ServiceFixture { $0.environment = environment }
        let receipt = try ServiceFixture.signed(sampleReceipt(type: type, purchases: [("com.example.pro", "1", 0)]))
        let json = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(receipt)).json()
        return (json["status"], json["error"]?["code"])
    }

    @Test(
        "a production service takes Production and ProductionVPP; sandbox types get 21007",
        arguments: [
            ("Production", 0), ("ProductionVPP", 0), ("ProductionSandbox", 21007), ("ProductionVPPSandbox", 21007),
            ("Sandbox", 21007), ("Xcode", 21007),
        ])
    func production(type: String, status: Int) throws {
        #expect(try answer(type, environment: .production).0 == .integer(status))
    }

    @Test(
        "a sandbox service takes the sandbox types and Xcode's; production types get 21008",
        arguments: [
            ("ProductionSandbox", 0), ("ProductionVPPSandbox", 0), ("Sandbox", 0), ("Xcode", 0), ("Production", 21008),
            ("ProductionVPP", 21008),
        ])
    func sandbox(type: String, status: Int) throws {
        #expect(try answer(type, environment: .sandbox).0 == .integer(status))
    }

    @Test(
        "a receipt without a receipt_type, or with one that is not exactly Apple's, is refused with 21003 by both",
        arguments: [nil, "production", "PRODUCTION", "Production ", "TestFlight", ""] as [String?])
    func unknownTypes(type: String?) throws {
        for environment in ServiceConfiguration.Environment.allCases {
            let (status, code) = try answer(type, environment: environment)
            #expect(status == .integer(21003), "\(String(describing: type)) at \(environment)")
            #expect(code == .string("unknown_receipt_type"))
        }
    }
}
