"""What each built-in command does when it runs: the imports a command needs come with it."""
