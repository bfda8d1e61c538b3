import Foundation

/// Refuses state-changing requests that a browser sent on behalf of another site (CSRF).
///
/// A browser that has Basic credentials cached for the server attaches them to a form that
/// another site posts to it. Browsers say where such a request comes from, so a `POST`, `PUT`,
/// `PATCH` or `DELETE` gets 403 when it carries `Sec-Fetch-Site` other than `same-origin` or
/// `none` (typed by the user), or an `Origin` other than the server's own (`http://` or
/// `https://` followed by the request's `Host`). Clients that send neither field (the ChatCave
/// client, the CLI, curl) are not affected.
enum CrossSiteCheck {
    /// The methods that change something.
    static let stateChangingMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    /// Throws when `request` changes something and a browser marked it as cross-site.
    /// - Throws: 403 naming the field that gave it away.
    static func check(_ request: APIRequest) throws(APIError) {
        guard stateChangingMethods.contains(request.method.uppercased()) else { return }
        if let site = normalized(request.header("Sec-Fetch-Site")), site != "same-origin", site != "none" {
            throw .forbidden("Requests from another site may not change anything (Sec-Fetch-Site: \(site.prefix(20)))")
        }
        if let origin = normalized(request.header("Origin")) {
            let host = normalized(request.header("Host")) ?? ""
            guard !host.isEmpty, origin == "http://" + host || origin == "https://" + host else {
                throw .forbidden("Requests from another origin may not change anything (Origin: \(origin.prefix(100)))")
            }
        }
    }

    private static func normalized(_ value: String?) -> String? {
        value?.trimmingCharacters(in: .whitespaces).lowercased()
    }
}
