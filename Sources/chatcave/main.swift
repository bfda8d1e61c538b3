print("chatcave: not built yet")
