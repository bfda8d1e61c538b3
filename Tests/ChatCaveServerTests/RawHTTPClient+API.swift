import CourierTestSupport

extension RawHTTPClient.Response {
    /// The text of the API's error body, `{"error": …}`; `nil` for any other body.
    var errorText: String? { (try? object())?["error"] as? String }
}
