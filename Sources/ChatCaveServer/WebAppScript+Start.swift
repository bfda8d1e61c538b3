extension WebAppScript {
    /// Routing by the location's hash (`#/rooms`, `#/rooms/<id>`) and start-up.
    static let start = #"""
        // Routing by the location's hash (#/rooms, #/rooms/<id>) and start-up.

        function route() {
          if (client.isHolding()) return;  // the sign-in view stays until the held requests can go
          if (!client.user) {
            leaveRoom();
            showSignIn('');
            return;
          }
          const match = /^#\/rooms\/(.+)$/.exec(location.hash);
          let id = null;
          if (match) {
            try {
              id = decodeURIComponent(match[1]);
            } catch (error) {
              id = null;
            }
          }
          if (id) {
            openRoom(id);
          } else {
            document.title = 'ChatCave';
            if (location.hash !== '#/rooms') history.replaceState(null, '', '#/rooms');
            showRooms();
          }
        }

        client.restore();
        client.onHold = signInNeeded;
        bindSignIn();
        bindRooms();
        bindRoom();
        window.addEventListener('hashchange', route);
        route();
        """#
}
