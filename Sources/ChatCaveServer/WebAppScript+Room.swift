extension WebAppScript {
    /// One room: chatters, messages polled every 1.5 s with `since` (each id shown once, in the
/// server's order), joining, leaving and posting.
    static let room = #"""
        // One room: its chatters, its messages (new ones fetched every 1.5 s with `since`), join,
        // leave, and the message form. Messages are shown in the server's order, each id once.

        const POLL_INTERVAL = 1500;

        const room = {
          id: null,
          generation: 0,    // changes whenever the room is opened or left: late answers are ignored
          lastID: null,     // the id of the last message received, for `since`
          seen: new Set(),  // the ids of the messages shown
          chatters: [],
          timer: null,
          polling: null,    // the generation whose poll is in flight
          again: false,     // poll again as soon as the one in flight ends
          gone: false,
        };

        function leaveRoom() {
          room.generation += 1;
          clearTimeout(room.timer);
          room.timer = null;
          room.id = null;
        }

        async function openRoom(id) {
          leaveRoom();
          const generation = room.generation;
          Object.assign(room, { id, lastID: null, seen: new Set(), chatters: [], again: false, gone: false });
          $('room-title').textContent = '';
          $('message-list').replaceChildren();
          $('chatter-list').textContent = '';
          $('message-text').value = '';
          showError('room-error', null);
          renderMembership();
          showView('room');
          try {
            const info = await api.room(id);
            if (generation !== room.generation) return;
            $('room-title').textContent = info.name;
            document.title = `${info.name} – ChatCave`;
            renderChatters(info.chatters);
          } catch (error) {
            if (generation !== room.generation || error.dropped) return;
            showError('room-error', error);
            if (error.status === 404) {
              room.gone = true;
              return;
            }
          }
          poll(generation);
        }

        /** Fetches the messages after the last one seen; then the next poll is due in 1.5 s. */
        async function poll(generation) {
          if (generation !== room.generation || room.gone) return;
          clearTimeout(room.timer);
          room.timer = null;
          if (room.polling === generation) {
            room.again = true;
            return;
          }
          room.polling = generation;
          try {
            const messages = await api.messages(room.id, room.lastID);
            if (generation !== room.generation) return;
            if (Array.isArray(messages)) addMessages(messages);
            if ($('room-error').dataset.source === 'poll') showError('room-error', null);
          } catch (error) {
            if (generation !== room.generation || error.dropped) return;
            showError('room-error', error);
            $('room-error').dataset.source = 'poll';
            if (error.status === 404) room.gone = true;
          } finally {
            if (room.polling === generation) room.polling = null;
            if (generation === room.generation && !room.gone) {
              if (room.again) {
                room.again = false;
                poll(generation);
              } else {
                room.timer = setTimeout(() => poll(generation), POLL_INTERVAL);
              }
            }
          }
        }

        function addMessages(messages) {
          const list = $('message-list');
          const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
          let membersChanged = false;
          for (const message of messages) {
            if (!message || typeof message.id !== 'string') continue;
            room.lastID = message.id;
            if (room.seen.has(message.id)) continue;
            room.seen.add(message.id);
            list.append(renderMessage(message));
            if (message.type !== 'chat') membersChanged = true;
          }
          if (membersChanged) refreshChatters();
          if (atBottom) list.scrollTop = list.scrollHeight;
        }

        function renderMessage(message) {
          const type = String(message.type || '').toLowerCase();
          const mine = client.user && message.author === client.user.name;
          const item = element('li', type === 'chat' ? (mine ? 'chat mine' : 'chat') : 'event');
          item.dataset.messageId = message.id;
          const author = String(message.author || 'someone');
          if (type === 'chat') {
            item.append(element('span', 'author', author));
          } else if (type === 'join') {
            item.append(element('span', null, `${author} joined the room`));
          } else if (type === 'leave') {
            item.append(element('span', null, `${author} left the room`));
          } else {
            item.append(element('span', null, `${author} (a message of a kind this app does not know)`));
          }
          const time = element('time', null, localTime(message.timestamp));
          time.dateTime = String(message.timestamp || '');
          const date = new Date(message.timestamp);
          if (!Number.isNaN(date.getTime())) time.title = date.toLocaleString();
          item.append(time);
          if (type === 'chat') item.append(element('span', 'text', message.text));
          return item;
        }

        async function refreshChatters() {
          const generation = room.generation;
          try {
            const chatters = await api.chatters(room.id);
            if (generation === room.generation) renderChatters(chatters);
          } catch (error) {
            // The next join or leave message tries again.
          }
        }

        function renderChatters(chatters) {
          room.chatters = Array.isArray(chatters) ? chatters : [];
          const names = room.chatters.map((chatter) => chatter.name);
          $('chatter-list').textContent = names.length ? names.join(', ') : 'nobody yet';
          renderMembership();
        }

        function isMember() {
          return client.user !== null && room.chatters.some((chatter) => chatter.id === client.user.id);
        }

        function renderMembership() {
          const member = isMember();
          $('join-button').hidden = member;
          $('leave-button').hidden = !member;
          $('message-text').disabled = !member;
          $('send-button').disabled = !member;
          $('post-hint').textContent = member ? 'Enter sends; Shift+Enter starts a new line.' : 'Join the room to post messages.';
        }

        async function changeMembership(joining) {
          const generation = room.generation;
          const button = joining ? $('join-button') : $('leave-button');
          try {
            const answer = await busy(button, () => (joining ? api.join(room.id) : api.leave(room.id)));
            if (generation !== room.generation) return;
            showError('room-error', null);
            if (joining && answer && Array.isArray(answer.users)) renderChatters(answer.users); else await refreshChatters();
            (joining ? $('message-text') : $('join-button')).focus();
            poll(generation);
          } catch (error) {
            if (generation === room.generation && !error.dropped) showError('room-error', error);
          }
        }

        async function postMessage() {
          const generation = room.generation;
          const input = $('message-text');
          const text = input.value;
          if (!text.trim()) {
            showError('room-error', 'Write a message first.');
            return;
          }
          try {
            await busy($('send-button'), () => api.post(room.id, text));
            if (generation !== room.generation) return;
            if (input.value === text) input.value = '';
            showError('room-error', null);
            poll(generation);
          } catch (error) {
            if (generation === room.generation && !error.dropped) showError('room-error', error);
          }
          renderMembership();
        }

        function bindRoom() {
          $('join-button').addEventListener('click', () => changeMembership(true));
          $('leave-button').addEventListener('click', () => changeMembership(false));
          $('post-form').addEventListener('submit', (event) => {
            event.preventDefault();
            postMessage();
          });
          $('message-text').addEventListener('keydown', (event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
              event.preventDefault();
              $('post-form').requestSubmit();
            }
          });
        }
        """#
}
