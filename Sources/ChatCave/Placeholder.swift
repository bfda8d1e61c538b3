// Placeholder: the ChatCave module arrives with the ChatCave issue.
