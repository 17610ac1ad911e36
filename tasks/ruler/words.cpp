// kvbench's own word lists for RULER's word needles and common-words extraction. RULER draws them from the
// `wonderwords` package's lists (and english_words.json beyond them); those are not copied here, so the
// words differ while their role is the same: keys are "adjective-noun" pairs, cwe draws distinct words.
#include "tasks/ruler/ruler.h"

namespace kvbench::tasks::ruler {

namespace {

const std::vector<std::string> kAdjectives = {
    "able", "acid", "agile", "alert", "amber", "ample", "ancient", "angry", "apt", "arctic", "ashen", "awake",
    "bald", "bare", "basic", "bitter", "black", "bland", "blind", "blue", "bold", "brave", "brief", "bright",
    "brisk", "broad", "brown", "busy", "calm", "candid", "careful", "cheap", "cheerful", "chief", "chilly",
    "civil", "clean", "clear", "clever", "close", "cloudy", "coarse", "cold", "common", "cool", "coral", "cosy",
    "crisp", "cruel", "curly", "curved", "damp", "dark", "dear", "deep", "dense", "dim", "dirty", "dizzy",
    "dry", "dull", "dusty", "eager", "early", "easy", "elder", "empty", "equal", "even", "exact", "faint",
    "fair", "false", "famous", "fancy", "far", "fast", "fat", "fierce", "fine", "firm", "flat", "fond",
    "frail", "free", "fresh", "friendly", "full", "funny", "fuzzy", "gentle", "giant", "glad", "gloomy",
    "golden", "good", "grand", "gray", "great", "green", "grim", "gross", "guilty", "handy", "happy", "hard",
    "harsh", "heavy", "hidden", "high", "hollow", "honest", "hot", "huge", "humble", "hungry", "icy", "idle",
    "ill", "jolly", "juicy", "keen", "kind", "large", "late", "lazy", "lean", "light", "little", "live",
    "lively", "lonely", "long", "loose", "loud", "lovely", "low", "loyal", "lucky", "mad", "magic", "major",
    "meek", "mellow", "merry", "mild", "minor", "misty", "modern", "moist", "moral", "muddy", "narrow",
    "nasty", "near", "neat", "new", "nice", "noble", "noisy", "odd", "old", "open", "orange", "pale", "plain",
    "pink", "plump", "polite", "poor", "proud", "pure", "purple", "quick", "quiet", "rapid", "rare", "raw",
    "ready", "real", "red", "regal", "rich", "rigid", "ripe", "rough", "round", "royal", "rude", "rusty",
    "sad", "safe", "salty", "sandy", "scarce", "sharp", "shiny", "short", "shy", "silent", "silky", "silver",
    "simple", "sleepy", "slim", "slow", "small", "smart", "smooth", "snowy", "soft", "solid", "sour", "spare",
    "steep", "sticky", "stiff", "still", "stormy", "strange", "strict", "strong", "sunny", "super", "sweet",
    "swift", "tall", "tame", "tender", "thick", "thin", "tidy", "tight", "tiny", "tired", "tough", "true",
    "ugly", "upset", "urban", "vast", "violet", "vivid", "warm", "weak", "wet", "white", "whole", "wide",
    "wild", "windy", "wise", "witty", "wooden", "yellow", "young", "zany", "zealous"};

const std::vector<std::string> kNouns = {
    "acorn", "actor", "anchor", "angle", "ant", "apple", "apron", "arch", "arrow", "attic", "axe", "badge",
    "bag", "bait", "ball", "banana", "band", "bank", "barn", "basket", "bat", "beach", "bean", "bear", "bed",
    "bee", "bell", "belt", "bench", "berry", "bike", "bird", "blade", "blanket", "boat", "bone", "book",
    "boot", "bottle", "bowl", "box", "branch", "bread", "brick", "bridge", "brush", "bucket", "button",
    "cabin", "cable", "cake", "camel", "camera", "candle", "canoe", "cap", "car", "card", "carpet", "carrot",
    "castle", "cat", "cave", "chain", "chair", "chalk", "cheese", "cherry", "chest", "chicken", "chimney",
    "circle", "city", "clock", "cloud", "coat", "coin", "comet", "cookie", "copper", "corn", "cotton",
    "cow", "crab", "crane", "crayon", "crown", "cup", "curtain", "cushion", "daisy", "deer", "desk", "diamond",
    "dinner", "dog", "doll", "dolphin", "donkey", "door", "dragon", "drawer", "dress", "drum", "duck", "eagle",
    "egg", "elbow", "engine", "falcon", "fan", "farm", "feather", "fence", "fern", "finger", "fire", "fish",
    "flag", "flame", "flower", "flute", "fog", "forest", "fork", "fox", "frog", "fruit", "garden", "gate",
    "ghost", "giraffe", "glass", "glove", "goat", "grape", "grass", "guitar", "hammer", "hand", "harbor",
    "hat", "hawk", "heart", "hill", "hive", "horse", "house", "island", "jacket", "jar", "jelly", "jewel",
    "kettle", "key", "kitten", "kite", "knife", "ladder", "lake", "lamp", "lantern", "leaf", "lemon",
    "letter", "lion", "lizard", "lock", "magnet", "map", "marble", "meadow", "melon", "mirror", "monkey",
    "moon", "mountain", "mouse", "mug", "nail", "needle", "nest", "net", "notebook", "oak", "ocean", "onion",
    "orchard", "otter", "owl", "paddle", "paint", "palace", "pan", "paper", "parrot", "peach", "pear",
    "pearl", "pebble", "pen", "pencil", "pepper", "piano", "pickle", "pillow", "pine", "pipe", "planet",
    "plate", "plum", "pocket", "pond", "pony", "pot", "potato", "pumpkin", "puppy", "quilt", "rabbit",
    "radio", "rain", "raven", "ribbon", "ring", "river", "road", "robot", "rock", "rocket", "roof", "rope",
    "rose", "sail", "salad", "sand", "saucer", "scarf", "school", "seal", "seed", "shadow", "shark", "sheep",
    "shell", "ship", "shoe", "shovel", "silk", "sink", "skirt", "sled", "snail", "snake", "sock", "sofa",
    "spade", "spider", "spoon", "squirrel", "stamp", "star", "stone", "stool", "storm", "straw", "stream",
    "sugar", "sun", "swan", "sweater", "table", "tail", "teapot", "tent", "thread", "tiger", "toast", "tomato",
    "tooth", "torch", "tower", "toy", "tractor", "train", "tree", "truck", "trumpet", "tulip", "turtle",
    "umbrella", "valley", "vase", "violin", "wagon", "wall", "walnut", "wand", "watch", "whale", "wheel",
    "whistle", "window", "wing", "wolf", "wool", "yarn", "zebra"};

const std::vector<std::string> kVerbs = {
    "accept", "add", "admire", "advise", "agree", "allow", "answer", "appear", "arrange", "arrive", "ask",
    "attach", "avoid", "bake", "balance", "bathe", "beg", "behave", "belong", "bless", "boil", "borrow",
    "bounce", "breathe", "bring", "build", "bump", "burn", "buzz", "calculate", "call", "carry", "catch",
    "change", "chase", "cheer", "chew", "choose", "clap", "climb", "collect", "comb", "compare", "count",
    "cover", "crawl", "cross", "cry", "dance", "deliver", "depend", "describe", "destroy", "dig", "divide",
    "drag", "draw", "dream", "drink", "drop", "dust", "earn", "enjoy", "enter", "escape", "explain",
    "fasten", "fetch", "fill", "fix", "float", "fold", "follow", "forgive", "gather", "glow", "grab",
    "greet", "grow", "guard", "guess", "hang", "help", "hide", "hop", "hug", "hum", "hunt", "hurry",
    "imagine", "invent", "invite", "jog", "juggle", "jump", "kick", "kneel", "knit", "knock", "laugh",
    "launch", "learn", "lift", "listen", "load", "march", "measure", "melt", "mend", "mix", "move", "nod",
    "obey", "offer", "open", "order", "pack", "paddle", "paint", "pause", "peel", "pinch", "plant", "play",
    "point", "polish", "pour", "pray", "print", "promise", "pull", "punch", "push", "race", "rain", "reach",
    "read", "relax", "remember", "repeat", "reply", "rescue", "return", "ride", "roll", "rush", "sail",
    "scatter", "scream", "search", "shake", "share", "shine", "shiver", "shout", "sing", "skip", "sleep",
    "slide", "smell", "smile", "sneeze", "sniff", "snore", "solve", "sort", "spell", "spill", "splash",
    "spread", "squeeze", "stack", "stare", "steer", "stir", "stitch", "stretch", "swim", "swing", "talk",
    "taste", "teach", "tease", "thank", "throw", "tickle", "tie", "touch", "trace", "travel", "trust", "tug",
    "twist", "unite", "unlock", "vanish", "visit", "wait", "walk", "wander", "wash", "watch", "wave",
    "whisper", "wink", "wish", "wobble", "wonder", "wrap", "write", "yawn", "yell", "zip"};

const std::vector<std::string> kSyllables = {
    "ba", "be", "bi", "bo", "bu", "da", "de", "di", "do", "du", "fa", "fe", "fi", "fo", "fu", "ga", "ge",
    "gi", "go", "gu", "ka", "ke", "ki", "ko", "ku", "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo",
    "mu", "na", "ne", "ni", "no", "nu", "pa", "pe", "pi", "po", "pu", "ra", "re", "ri", "ro", "ru", "sa",
    "se", "si", "so", "su", "ta", "te", "ti", "to", "tu", "va", "ve", "vi", "vo", "vu", "za", "ze", "zi"};

}  // namespace

const std::vector<std::string>& adjectives() { return kAdjectives; }
const std::vector<std::string>& nouns() { return kNouns; }

// Real words first (nouns, adjectives, verbs, without repeats), then three-syllable pseudo-words in a fixed
// order: RULER too goes past its word lists (to english_words.json) when a length needs more words.
std::vector<std::string> word_pool(std::size_t count) {
  std::vector<std::string> pool;
  std::set<std::string> seen;
  for (const auto* list : {&kNouns, &kAdjectives, &kVerbs})
    for (const auto& word : *list)
      if (seen.insert(word).second) pool.push_back(word);
  const std::size_t n = kSyllables.size();
  for (std::size_t i = 0; pool.size() < count && i < n * n * n; ++i) {
    std::string word = kSyllables[i / (n * n)] + kSyllables[(i / n) % n] + kSyllables[i % n];
    if (seen.insert(word).second) pool.push_back(word);
  }
  return pool;
}

}  // namespace kvbench::tasks::ruler
