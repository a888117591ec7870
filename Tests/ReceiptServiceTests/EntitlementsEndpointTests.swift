import Entitlements
import Foundation
import ReceiptService
import ReceiptSigner
import StrictJSON
import Testing

@Suite("POST /v1/entitlements says what verified receipts unlock")
struct EntitlementsEndpointTests {
    static let catalogJSON =
        #"{"products":[{"id":"com.example.removeads","type":"non_consumable","entitlements":["no_ads"]},"#
        + #"{"id":"com.example.coins","type":"consumable","entitlements":["coins"],"amount":100}]}"#

    func fixture() throws -> ServiceFixture {
        let catalog = try Catalog(json: Array(Self.catalogJSON.utf8))
        return try ServiceFixture { $0.catalogs = ["game": catalog] }
    }

    /// A JSON array holding one receipt with a non-consumable and two consumables.
    func receipts() throws -> String {
        let receipt = try ServiceFixture.signed(
            sampleReceipt(purchases: [
                ("com.example.removeads", "1", 1), ("com.example.coins", "2", 2), ("com.example.coins", "3", 3),
            ]))
        return #"["\#(Data(receipt).base64EncodedString())"]"#
    }

    @Test("a configured catalog id and an inline catalog give the same report")
    func report() throws {
        let fixture = try fixture()
        let byID = try fixture.post(
            "/v1/entitlements",
            json: #"{"receipts":\#(try receipts()),"catalog_id":"game","now":"2024-07-01T00:00:00Z"}"#)
        #expect(byID.status == 200)
        let json = try byID.json()
        #expect(json["entitlements"]?["no_ads"]?["state"] == .string("active"))
        #expect(json["balances"]?["coins"] == .integer(200))
        let inline = try fixture.post(
            "/v1/entitlements",
            json: #"{"receipts":\#(try receipts()),"catalog":\#(Self.catalogJSON),"now":"2024-07-01T00:00:00Z"}"#)
        #expect(try inline.json() == json)
    }

    @Test("a receipt that does not verify is a 422 naming it and its code; nothing is evaluated")
    func invalidReceipt() throws {
        let fixture = try fixture()
        let reply = try fixture.post("/v1/entitlements", json: #"{"receipts":["MIIBAAAA"],"catalog_id":"game"}"#)
        #expect(reply.status == 422)
        #expect(reply.errorCode == "invalid_receipt")
        guard case .string(let message)? = try reply.json()["error"]?["message"] else { return }
        #expect(message.hasPrefix("receipts[0]: malformed"))
    }

    @Test(
        "a request without receipts, with an unknown catalog or with both catalog forms is a 400",
        arguments: [
            #"{"catalog_id":"game"}"#, #"{"receipts":[],"catalog_id":"game"}"#,
            #"{"receipts":["AAAA"],"catalog_id":"nope"}"#, #"{"receipts":["AAAA"]}"#,
            #"{"receipts":["AAAA"],"catalog_id":"game","catalog":{}}"#,
            #"{"receipts":["AAAA"],"catalog":{"products":7}}"#,
            #"{"receipts":["AAAA"],"catalog_id":"game","now":"soon"}"#,
        ])
    func invalidRequest(body: String) throws {
        let reply = try fixture().post("/v1/entitlements", json: body)
        #expect(reply.status == 400)
        #expect(reply.errorCode == "invalid_request")
    }
}
