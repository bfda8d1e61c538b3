extension WebAppScript {
    /// The room list: the rooms with their chatter counts, creating a room, deleting an empty one.
    static let rooms = #"""
        // The room list: every room with its number of chatters, a form to create one, and a delete
        // button on each empty room.

        async function showRooms() {
          leaveRoom();
          showError('rooms-error', null);
          showView('rooms');
          await loadRooms();
        }

        async function loadRooms() {
          try {
            const rooms = await api.rooms();
            if (Array.isArray(rooms)) renderRooms(rooms);
            showError('rooms-error', null);
          } catch (error) {
            if (!error.dropped) showError('rooms-error', error);
          }
        }

        function renderRooms(rooms) {
          const items = rooms.map((room) => {
            const chatters = Array.isArray(room.chatters) ? room.chatters : [];
            const item = element('li');
            item.dataset.roomId = room.id;
            const link = element('a', null, room.name);
            link.href = `#/rooms/${encodeURIComponent(room.id)}`;
            item.append(link);
            const member = client.user && chatters.some((chatter) => chatter.id === client.user.id);
            const count = chatters.length === 1 ? '1 chatter' : `${chatters.length} chatters`;
            item.append(element('span', 'count', member ? `${count}, you among them` : count));
            if (chatters.length === 0) {
              const remove = element('button', 'danger', 'Delete');
              remove.type = 'button';
              remove.setAttribute('aria-label', `Delete room ${room.name}`);
              remove.addEventListener('click', () => deleteRoom(room.id, remove));
              item.append(remove);
            }
            return item;
          });
          $('room-list').replaceChildren(...items);
          $('rooms-empty').hidden = rooms.length > 0;
        }

        async function createRoom() {
          const input = $('new-room-name');
          const name = input.value.trim();
          if (!name) {
            showError('rooms-error', 'Enter a name for the new room.');
            input.focus();
            return;
          }
          try {
            const room = await busy($('create-room-button'), () => api.createRoom(name));
            input.value = '';
            showError('rooms-error', null);
            location.hash = `#/rooms/${encodeURIComponent(room.id)}`;
          } catch (error) {
            if (!error.dropped) showError('rooms-error', error);
          }
        }

        async function deleteRoom(id, button) {
          try {
            await busy(button, () => api.deleteRoom(id));
            showError('rooms-error', null);
          } catch (error) {
            if (!error.dropped) showError('rooms-error', error);
          }
          await loadRooms();
          $('rooms-title').focus();
        }

        function bindRooms() {
          $('create-room-form').addEventListener('submit', (event) => {
            event.preventDefault();
            createRoom();
          });
          $('refresh-rooms').addEventListener('click', () => busy($('refresh-rooms'), loadRooms));
        }
        """#
}
