import Foundation
import ReceiptService
import Testing

@Suite("Authorization: the Bearer scheme's name is case-insensitive")
struct BearerSchemeTests {
    @Test(
        "bearer, BEARER and Bearer with extra spaces are accepted on a token endpoint",
        arguments: ["Bearer", "bearer", "BEARER", "bEaReR"])
    func schemeCaseIsIgnored(scheme: String) throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.send(
            "POST", "/v1/transactions", body: Array(ServeProcessTests.transaction(1).utf8), token: nil,
            headers: ["Authorization": "\(scheme)  \(ServiceFixture.token)", "Content-Type": "application/json"])
        #expect(reply.status == 201, "\(reply.text)")
    }

    @Test(
        "another scheme, no token, or no space is refused with 401",
        arguments: [
            "Basic \(ServiceFixture.token)", "Bearer", "Bearer ", "Bearer\(ServiceFixture.token)", "Bearer wrong",
        ])
    func otherFormsAreRefused(header: String) throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.send(
            "POST", "/v1/transactions", body: Array(ServeProcessTests.transaction(1).utf8), token: nil,
            headers: ["Authorization": header, "Content-Type": "application/json"])
        #expect(reply.status == 401)
        #expect(reply.errorCode == "unauthorized")
    }
}
