"""The chats as data: conversations, their messages read back checked, the chat list and its
files, two tabs' writes merged, search, and the recordings kept beside them. Pure Python, no
page and no rendering: the bundled page's ``pysse.app`` binds them to its DOM and its store.

    conversation.py     a tree of messages: versions, branches, continue; JSON round trips
    message.py          one message, as stored and exported
    message_extras.py   reasoning blocks and tool calls kept beside an answer's text
    message_read.py     a message read back from a file or the store, every field checked
    records.py          checked reading of any value a chat record brings in
    changes.py          what one tab changed since it last wrote a conversation
    merge.py            a write is a merge: several tabs, one chat
    files.py            the chat list (rows, order, ids), export and a checked import
    recording.py        an answer's bytes and their times, kept for the inspector
    search.py           search across chats: matches and snippets, in bounded steps
"""
