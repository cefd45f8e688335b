"""Deterministic generator of a synthetic WikiHow article corpus.

The simulated WikiHow app (modelled on the Mobile-Env WikiHow task set used by the ProgRM
paper) needs a few hundred realistic-looking how-to articles to search, browse and read. This
module builds them from hand-written banks instead of shipping scraped text:

* 39 leaf categories under 13 parent categories, each leaf with its own topics (verb + object
  phrases), supplies, and category-specific step sentences;
* about 60 authors, some with credentials (``"Trudi Griffin, LPC, MS"``), some plain names;
* 640+ articles with an intro, 1-3 methods of 3-6 steps, tips, warnings, things needed,
  references, view and co-author counts, an update date and related-article links.

Search is deliberately not trivial: roughly a third of the articles belong to near-duplicate
families of 2-4 articles (the same object with different verbs, "Bake/Grill/Broil Lobster
Tails"; the same verb with related objects, "Clean a Nonstick Pan/Cast Iron Pan"; and
paraphrases, "Fix a Flat Bike Tire" vs "Repair a Punctured Bicycle Tire"). The example titles of
the Mobile-Env WikiHow tasks ("How to Bake Lobster Tails", "How to 180 on a Scooter", ...) are
always present with their exact casing.

Generation is fully deterministic: all randomness comes from one ``random.Random(seed)``, every
list is built in a fixed order and no string hashing, set iteration order or current date is
used, so ``json.dumps(generate_corpus(seed))`` is byte-identical across runs and machines.

Run ``python -m gui_gym.envs.wikihow.gen_corpus`` to print a short summary.
"""

import json
import re
from datetime import date, timedelta
from random import Random
from typing import Any

__all__ = ["generate_corpus"]

_FORMAT = "gui-gym/wikihow-corpus"
_VERSION = 1

_SMALL_WORDS = frozenset(
    ["a", "an", "the", "in", "for", "of", "to", "with", "on", "at", "and", "or", "without"]
)

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

# ---------------------------------------------------------------------------------------------
# Grammar helpers
# ---------------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    """Whitespace-separated words of a word-list literal, in order."""
    return tuple(text.split())


_DOUBLE_FINAL = frozenset(
    _words(
        """cut set get put stop plan shop run trim chop swim jog dig hem knit prep mop scrub wrap dip
    ship sit chat hug rub skip spin grab drop fit hit let quit step strap pin rip flip nap tap zip
    clip win begin admit forget commit repot top hop cram tailwhip barspin pot stir blot map plug
    unplug chip slip snap jam tip unclog clog defog reset weatherstrip transfer split strip"""
    )
)
_GERUND_SPECIAL = {
    "be": "being",
    "see": "seeing",
    "tie": "tying",
    "dye": "dyeing",
    "free": "freeing",
    "lie": "lying",
    "die": "dying",
}
# Multi-word verbs whose *last* word takes the -ing ("Crate Train" -> "crate training").
_COMPOUND_FIRST = frozenset(
    ["hand", "crate", "potty", "house", "litter", "jump", "parallel", "bunny"]
)


def _gerund_word(word: str) -> str:
    if word in _GERUND_SPECIAL:
        return _GERUND_SPECIAL[word]
    if word in _DOUBLE_FINAL:
        return word + word[-1] + "ing"
    if word.endswith("ie"):
        return word[:-2] + "ying"
    if word.endswith("e") and not word.endswith(("ee", "oe", "ye")):
        return word[:-1] + "ing"
    return word + "ing"


def _gerund(verb: str) -> str:
    """Lower-case -ing form of a (possibly phrasal or compound) verb."""
    words = verb.lower().split()
    if len(words) > 1 and words[0] in _COMPOUND_FIRST:
        return " ".join([*words[:-1], _gerund_word(words[-1])])
    return " ".join([_gerund_word(words[0]), *words[1:]])


def _titlecase(text: str) -> str:
    """WikiHow-style Title Case; words with inner capitals (iPhone, CC) are kept as written."""
    out: list[str] = []
    for i, word in enumerate(text.split()):
        if any(c.isupper() for c in word[1:]):
            out.append(word)
        elif i > 0 and word.lower() in _SMALL_WORDS:
            out.append(word.lower())
        else:
            out.append(word[0].upper() + word[1:])
    return " ".join(out)


def _slugify(text: str) -> str:
    """Slug of a title tail: apostrophes dropped, other non-alphanumerics collapsed to '-'."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text.replace("'", "")).strip("-")


def _a_an(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------
# Domain banks (one per parent category)
# ---------------------------------------------------------------------------------------------
# Template syntax: {name} is a slot (task, task_full, doing, Doing, the_o, it, tool, tool2,
# field); [a|b|c] picks one alternative. Templates using the_o/it are skipped for topics flagged
# "x" (no natural definite object); templates using tool/tool2 need a leaf with supplies.

_DOMAINS: dict[str, dict[str, Any]] = {
    "food": {
        "field": "home cooking",
        "methods": (
            "Getting Your Ingredients Ready",
            "Preparing {the_o}",
            "{Doing}",
            "Adding Extra Flavor",
            "Finishing and Serving",
        ),
        "steps": (
            "Read the whole recipe once and lay out every ingredient before you start {doing}.",
            "Wash your hands and wipe down your counters before you handle {the_o}.",
            "Taste as you go and adjust the salt, sugar, or acid a little at a time.",
            "Measure ingredients with proper measuring cups and spoons instead of guessing.",
            "Use {tool} to keep the process neat and the results consistent.",
            "Let {the_o} rest for a few minutes before serving so the flavors settle.",
            "Store leftovers in an airtight container in the fridge for up to [2|3|4] days.",
            "Label containers with the date so you know how long leftovers have been stored.",
            "Clean {tool} right after you finish so residue does not dry on.",
            "Serve {the_o} with a simple side that complements {it} without overpowering {it}.",
        ),
        "tips": (
            "Fresh ingredients make a big difference, so buy them as close to cooking time as you can.",
            "If you are cooking for guests, do a practice run the week before.",
            "An instant-read thermometer takes the guesswork out of knowing when food is done.",
            "Clean as you go so the kitchen is not a mess when you finish.",
            "Make a double batch and freeze half for a quick treat later.",
        ),
        "warnings": (
            "Never leave hot oil or a hot stove unattended.",
            "Cook seafood, meat, and eggs to safe internal temperatures to avoid foodborne illness.",
            "Check ingredient labels carefully if anyone you are serving has food allergies.",
            "Do not leave perishable food at room temperature for more than two hours.",
        ),
        "quals": ("at home", "for beginners", "the easy way", "for a crowd"),
        "intro": (
            "{Doing} at home lets you control every ingredient and usually costs less than eating out.",
            "A little preparation and the right timing are the real secrets to great results in the kitchen.",
            "You do not need fancy equipment, just a few basic kitchen tools and good ingredients.",
        ),
        "refs": (
            "www.culinarybasics.org",
            "www.homecookingcollective.com",
            "extension.foodscience-network.edu",
            "www.seriouskitchenlab.com",
        ),
    },
    "home": {
        "field": "home care",
        "methods": (
            "Getting Ready",
            "Preparing {the_o}",
            "{Doing}",
            "Finishing the Job",
            "Preventing Future Problems",
            "Cleaning Up",
        ),
        "steps": (
            "Clear the area around {the_o} so you have room to work.",
            "Lay down an old towel or drop cloth to catch drips and debris.",
            "Work from top to bottom so dust and drips fall onto areas you have not done yet.",
            "Use {tool} for the hard-to-reach spots.",
            "Wear gloves to protect your hands from cleaners and sharp edges.",
            "Take your time with {the_o}, since forcing parts can cause damage.",
            "Check {the_o} again after [an hour|a day|a few days] to make sure the fix held.",
            "Keep receipts and manuals for anything you buy in case you need to return it.",
        ),
        "tips": (
            "Keep a basic toolkit in an easy-to-find spot so small jobs stay small.",
            "White vinegar and baking soda handle many cleaning jobs without harsh chemicals.",
            "Label switches, valves, and breakers so you can find them quickly next time.",
            "Tackle the job on a dry, mild day if it involves ventilation or drying time.",
        ),
        "warnings": (
            "Never mix bleach with ammonia or vinegar, since the fumes are toxic.",
            "Turn off power or water before working on electrical or plumbing fixtures.",
            "Call a licensed professional if you find damaged wiring, mold, or major leaks.",
            "Keep cleaners and tools out of reach of children and pets.",
        ),
        "quals": ("without professional help", "the easy way", "quickly", "on a budget"),
        "intro": (
            "Most of the time you can handle it yourself with basic supplies instead of calling a professional.",
            "Tackling small household jobs early keeps them from turning into expensive repairs.",
            "A free afternoon and a few inexpensive supplies are usually all it takes.",
        ),
        "refs": (
            "www.thehomeownershandbook.com",
            "www.cleaninginstitute-guides.org",
            "extension.homeandgarden.edu",
            "www.fixitfriday.net",
        ),
    },
    "health": {
        "field": "health and wellness",
        "methods": (
            "Understanding the Basics",
            "{Doing}",
            "Making Lifestyle Changes",
            "Taking Care of Yourself Afterward",
            "Getting Professional Help",
        ),
        "steps": (
            "Pay attention to how your body feels before, during, and after {doing}.",
            "Drink plenty of water and eat regular, balanced meals while you work on this.",
            "Keep a simple log of symptoms or progress to share with your doctor.",
            "Make one small change at a time so you can tell what is actually helping.",
            "Ask a friend or family member to check in with you while you {task}.",
            "See a doctor if symptoms are severe, sudden, or do not improve within a few days.",
            "Give yourself [one|two|three] weeks of steady effort before judging whether it works.",
        ),
        "tips": (
            "Small, consistent habits usually work better than big changes you cannot maintain.",
            "Tell your doctor about any supplements or medications you take.",
            "Sleep, diet, and exercise all affect each other, so improving one can help the others.",
            "Apps and journals can help you notice patterns over time.",
        ),
        "warnings": (
            "This information does not replace advice from a qualified medical professional.",
            "Call emergency services right away if someone has trouble breathing or loses consciousness.",
            "Seek professional help immediately if you have thoughts of harming yourself.",
            "Stop any new routine that causes pain, dizziness, or unusual symptoms.",
        ),
        "quals": ("at home", "the right way"),
        "intro": (
            "Small, steady changes tend to make the biggest difference to how you feel.",
            "Everyone's situation is different, so take what works for you and check with a professional when in doubt.",
        ),
        "refs": (
            "www.healthlineclinic-notes.org",
            "www.familyhealthcenter-guide.com",
            "www.medicalcollege-library.edu",
            "www.wellnessresearchdigest.org",
        ),
    },
    "tech": {
        "field": "technology",
        "methods": (
            "Preparing Your Device",
            "{Doing}",
            "Using the Settings Menu",
            "Troubleshooting Common Problems",
            "Finishing Up",
        ),
        "steps": (
            "Make sure you are connected to a stable Wi-Fi network before you begin.",
            "Write down your current settings before you change anything.",
            "Sign in with the account you want to change, not a shared or work account.",
            "Restart the app or device if the option you need does not appear.",
            "Install any pending updates, since older versions may hide the setting.",
            "Back up important files before you {task} in case something goes wrong.",
            "Search the official help center if the menu names look different on your version.",
            "Confirm the change by checking your account or settings page afterward.",
        ),
        "tips": (
            "Write down any new passwords and store them in a password manager.",
            "Menu names change between versions, so look for similar wording if yours looks different.",
            "Turn on two-factor authentication to keep your account secure.",
            "Screenshots of your settings make it easy to undo changes later.",
        ),
        "warnings": (
            "Never share your password or verification codes with anyone who contacts you.",
            "Some changes cannot be undone, so read each prompt carefully before confirming.",
            "Be careful of third-party tools that ask for your login details.",
            "Back up important data first, since resets can erase files permanently.",
        ),
        "quals": ("the right way", "quickly", "for beginners"),
        "intro": (
            "The exact menus vary by device and version, but the overall process is the same.",
            "It only takes a few minutes once you know where the right settings are hidden.",
        ),
        "refs": (
            "www.techsupportdigest.com",
            "www.gadgetfixers.net",
            "help.desktopguides.org",
            "www.computing-basics.edu",
        ),
    },
    "vehicles": {
        "field": "vehicle maintenance",
        "methods": (
            "Getting Ready",
            "Inspecting {the_o}",
            "{Doing}",
            "Finishing Up and Testing",
            "Staying Safe",
        ),
        "steps": (
            "Work in a well-ventilated area with plenty of light.",
            "Look up the exact specifications for your make and model before you buy parts.",
            "Keep {tool} and a rag within reach while you work.",
            "Inspect {the_o} for cracks, wear, or loose parts before you begin.",
            "Take a slow test drive or ride to make sure everything feels right.",
            "Write the date and mileage in a logbook so you know when to {task} again.",
        ),
        "tips": (
            "Doing simple maintenance yourself can save a lot compared with shop prices.",
            "Keep a small emergency kit with gloves, a flashlight, and basic tools in your vehicle.",
            "Check your owner's manual first, since it lists the correct parts and intervals.",
            "Regular checks help you spot small problems before they become expensive.",
        ),
        "warnings": (
            "Never work under a vehicle supported only by a jack; always use jack stands.",
            "Let hot engines and exhaust parts cool before touching them.",
            "Dispose of used oil and batteries at an approved recycling center.",
            "Have a professional check any safety system you are not sure about, such as brakes.",
        ),
        "quals": ("yourself", "the right way", "on a budget"),
        "intro": (
            "Regular care keeps you safer on the road and saves money on repairs.",
            "You only need a few basic tools and a safe place to work.",
        ),
        "refs": (
            "www.autocarejournal.com",
            "www.drivesafe-institute.org",
            "www.bikeshopmechanics.net",
            "www.motorists-guide.org",
        ),
    },
    "pets": {
        "field": "pet care",
        "methods": (
            "Preparing Your Pet",
            "{Doing}",
            "Building Good Habits",
            "Rewarding Good Behavior",
            "Knowing When to Call the Vet",
        ),
        "steps": (
            "Pick a calm time of day when your pet is relaxed and not hungry.",
            "Keep treats within reach so you can reward good behavior right away.",
            "Go slowly and stop if your pet shows signs of fear, such as hiding or growling.",
            "Be consistent and practice at the same time each day.",
            "Ask everyone in your household to follow the same rules.",
            "Watch your pet afterward for any changes in appetite or behavior.",
        ),
        "tips": (
            "Every animal is different, so adjust the pace to your pet's comfort level.",
            "Short, positive sessions work better than long, frustrating ones.",
            "Keep your vet's phone number and the nearest emergency clinic saved in your phone.",
            "Rewards work better than punishment for almost every animal.",
        ),
        "warnings": (
            "Some human foods, like chocolate, grapes, and onions, are toxic to pets.",
            "Never hit or yell at an animal, since it damages trust and can cause aggression.",
            "Contact a veterinarian right away if your pet shows signs of pain or illness.",
            "Supervise your pet closely around new animals or unfamiliar objects.",
        ),
        "quals": ("the right way", "for first time owners"),
        "intro": (
            "Patience and positive reinforcement go a long way with animals of every kind.",
            "Your pet will be happier and healthier when routines are calm and predictable.",
        ),
        "refs": (
            "www.petcarecouncil.org",
            "www.companionanimalhealth.com",
            "vetmed.animalclinic-notes.edu",
            "www.happytails-training.com",
        ),
    },
    "fitness": {
        "field": "fitness",
        "methods": (
            "Getting Started",
            "Learning the Basics",
            "{Doing}",
            "Building Strength and Skill",
            "Practicing Safely",
        ),
        "steps": (
            "Warm up with [5|10] minutes of light movement before you {task}.",
            "Focus on good form first and add speed or weight later.",
            "Breathe steadily and avoid holding your breath during hard efforts.",
            "Stop immediately if you feel sharp pain, dizziness, or numbness.",
            "Practice [two|three] times a week and track your progress in a notebook.",
            "Cool down and stretch the muscles you worked when you finish.",
        ),
        "tips": (
            "Consistency matters more than intensity when you are starting out.",
            "Hydrate before, during, and after your workout.",
            "A session with a qualified coach can help you learn proper form quickly.",
            "Rest days let your muscles recover and get stronger.",
        ),
        "warnings": (
            "Check with your doctor before starting a new exercise program if you have health concerns.",
            "Sharp or lasting pain is a signal to stop, not to push through.",
            "Always wear proper protective gear, especially when learning new tricks.",
            "Do not increase weight, distance, or difficulty too quickly.",
        ),
        "quals": ("for beginners", "at home", "safely"),
        "intro": (
            "Good technique protects you from injury and helps you see progress faster.",
            "Start slowly, focus on form, and build up from there.",
        ),
        "refs": (
            "www.fitnessfundamentals.org",
            "www.sportsmedicine-review.com",
            "kinesiology.athletics-lab.edu",
            "www.activeliving-journal.com",
        ),
    },
    "finance": {
        "field": "personal finance",
        "methods": (
            "Getting Your Finances in Order",
            "Doing Your Research",
            "{Doing}",
            "Avoiding Common Mistakes",
            "Following Up",
        ),
        "steps": (
            "Write down your goal and the deadline you want to meet.",
            "Gather pay stubs, statements, and account numbers in one folder.",
            "Compare at least [two|three] options before you make a decision.",
            "Read every document carefully before you sign or submit it.",
            "Ask questions about any fee or term you do not understand.",
            "Set a calendar reminder to review your progress each month.",
        ),
        "tips": (
            "Automating payments and savings makes it easier to stick to your plan.",
            "Free tools from your bank or credit union can help you track progress.",
            "Keep digital copies of important financial documents in a secure folder.",
            "A fee-only financial advisor can give unbiased advice for complex situations.",
        ),
        "warnings": (
            "Be wary of anyone who promises guaranteed returns or asks for upfront fees.",
            "Missing deadlines can lead to penalties, so mark important dates on your calendar.",
            "This article is general information, not personal financial or legal advice.",
            "Never give your bank or Social Security details to unsolicited callers.",
        ),
        "quals": ("the right way", "for beginners"),
        "intro": (
            "A little planning now can save you a lot of money and stress later.",
            "Understanding the basics puts you in control of your financial decisions.",
        ),
        "refs": (
            "www.moneysmartbasics.org",
            "www.consumerfinance-guide.com",
            "www.householdbudgetlab.org",
            "finance.businessschool-notes.edu",
        ),
    },
    "relationships": {
        "field": "relationships",
        "methods": (
            "Starting the Conversation",
            "Showing That You Care",
            "{Doing}",
            "Handling Difficult Moments",
            "Building Trust Over Time",
        ),
        "steps": (
            "Choose a calm moment when neither of you is rushed or upset.",
            "Use I statements, like I feel, instead of blaming language.",
            "Listen without interrupting and repeat back what you heard.",
            "Be patient, since trust and closeness take time to build.",
            "Respect the other person's boundaries, even if you disagree.",
            "Follow up a few days later to show that you meant what you said.",
        ),
        "tips": (
            "Small, regular gestures often mean more than grand ones.",
            "Everyone shows care differently, so pay attention to what matters to the other person.",
            "It is okay to take a break from a tense conversation and come back later.",
            "Be honest about your own needs as well as theirs.",
        ),
        "warnings": (
            "If you ever feel unsafe in a relationship, reach out to a trusted person or a support hotline.",
            "Do not try to change who you are just to please someone else.",
            "Avoid having serious conversations over text when emotions are running high.",
        ),
        "quals": ("the right way", "as an introvert"),
        "intro": (
            "Strong relationships are built on honesty, patience, and small everyday actions.",
            "It can feel awkward at first, but being genuine almost always pays off.",
        ),
        "refs": (
            "www.relationshipresearch-institute.org",
            "www.healthyconnections-counseling.com",
            "psychology.socialscience-notes.edu",
            "www.friendshipmatters.org",
        ),
    },
    "crafts": {
        "field": "arts and crafts",
        "methods": (
            "Gathering Your Supplies",
            "Learning the Basic Technique",
            "{Doing}",
            "Adding the Finishing Touches",
            "Caring for Your Tools",
        ),
        "steps": (
            "Set up a clean, well-lit workspace with your supplies laid out.",
            "Practice the technique on a scrap piece before you start the real project.",
            "Work slowly and check your progress often.",
            "Keep {tool} handy so you are not hunting for it midway.",
            "Take photos of your progress so you can see how your skills improve.",
            "Clean and store your tools properly when you finish {doing}.",
        ),
        "tips": (
            "Cheaper practice supplies are fine while you learn the basics.",
            "Online communities and local classes are great places to get feedback.",
            "Keep a notebook of techniques, colors, or measurements you like.",
            "Good lighting makes detailed work much easier on your eyes.",
        ),
        "warnings": (
            "Keep sharp tools and blades pointed away from your body.",
            "Work in a ventilated space when using paints, stains, or solvents.",
            "Store chemicals and small supplies away from children and pets.",
        ),
        "quals": ("for beginners", "the right way", "on a budget"),
        "intro": (
            "You do not need expensive supplies to get started, just some practice and patience.",
            "Once you learn the basic technique, you can adapt it to all kinds of projects.",
        ),
        "refs": (
            "www.craftersguild-online.org",
            "www.makersworkbench.com",
            "art.designschool-notes.edu",
            "www.handmadehobbyist.net",
        ),
    },
    "travel": {
        "field": "travel",
        "methods": (
            "Planning Ahead",
            "Packing the Essentials",
            "{Doing}",
            "Staying Safe",
            "Saving Money",
        ),
        "steps": (
            "Make a checklist a week before you leave and pack a little each day.",
            "Keep your passport, ID, and tickets in one easy-to-reach pocket.",
            "Check the latest travel advisories and local rules for your destination.",
            "Leave extra time for traffic, lines, and delays.",
            "Share your itinerary with a friend or family member at home.",
            "Carry a small amount of local cash for places that do not take cards.",
        ),
        "tips": (
            "Traveling midweek or in the shoulder season is often cheaper and less crowded.",
            "Download offline maps before you leave in case you lose signal.",
            "Pack a change of clothes in your carry on in case your luggage is delayed.",
            "Learn a few basic phrases in the local language.",
        ),
        "warnings": (
            "Keep valuables out of sight and be aware of common tourist scams.",
            "Check that your passport is valid for at least six months beyond your travel dates.",
            "Do not leave food or scented items in your tent in bear country.",
        ),
        "quals": ("on a budget", "for beginners", "the right way"),
        "intro": (
            "A bit of planning before you go makes the whole trip smoother and cheaper.",
            "Knowing what to expect helps you avoid stress and enjoy the journey.",
        ),
        "refs": (
            "www.globetrottersdigest.com",
            "www.travelsmart-advisory.org",
            "www.outdoorrecreation-council.org",
            "www.budgetroutes.net",
        ),
    },
    "education": {
        "field": "writing and communication",
        "methods": (
            "Getting Organized",
            "{Doing}",
            "Checking Your Work",
            "Avoiding Common Mistakes",
            "Building Good Habits",
        ),
        "steps": (
            "Set aside a quiet block of time and gather everything you need first.",
            "Break the task into small steps and finish one before starting the next.",
            "Look at a good example before you {task} so you know what to aim for.",
            "Double-check spelling, names, and numbers before you send or submit anything.",
            "Ask someone with experience for help if you are unsure about the rules.",
            "Keep a copy of your work for your records.",
        ),
        "tips": (
            "Reading good examples by others is one of the fastest ways to improve.",
            "Short daily practice works better than one long session.",
            "Keep a checklist of the rules you tend to forget.",
            "Ask for feedback early instead of waiting until the end.",
        ),
        "warnings": (
            "Plagiarism can have serious consequences, so always cite your sources.",
            "Double-check addresses and numbers, since small mistakes can cause big delays.",
            "Last-minute rushing leads to careless errors, so start early.",
        ),
        "quals": ("the right way", "for beginners", "quickly"),
        "intro": (
            "Clear, careful work makes a strong impression and avoids costly mistakes.",
            "A simple routine and a few good habits make the process much easier.",
        ),
        "refs": (
            "www.writingcenter-resources.org",
            "www.postalhelpdesk.com",
            "owl.university-writing.edu",
            "www.studyskillshub.org",
        ),
    },
    "style": {
        "field": "beauty and style",
        "methods": (
            "Getting Ready",
            "Choosing the Right Products",
            "{Doing}",
            "Finishing the Look",
            "Maintaining the Results",
        ),
        "steps": (
            "Wash your hands before you start so you do not transfer oil or dirt.",
            "Work in front of a mirror with good, natural light.",
            "Use {tool} to get a smooth, even result.",
            "Choose products made for your skin or hair type.",
            "Take your time, since rushing usually leads to uneven results.",
            "Check the look from several angles before you finish.",
        ),
        "tips": (
            "Less is often more, especially when you are trying a new look.",
            "Patch test new products on a small area first to check for reactions.",
            "Take a photo in daylight to see how the look really appears.",
            "Replace old products regularly, since they can harbor bacteria.",
        ),
        "warnings": (
            "Stop using any product that causes redness, itching, or swelling.",
            "Never share eye makeup, since it can spread infections.",
            "Hot tools can burn skin and damage hair, so keep them moving and use a low setting.",
        ),
        "quals": ("for beginners", "at home", "the right way"),
        "intro": (
            "The right technique and products can make a big difference in how polished you look.",
            "With a little practice, you can get salon-quality results at home.",
        ),
        "refs": (
            "www.beautyeditors-guide.com",
            "www.dermatologyinsights.org",
            "www.styleandfit-journal.com",
            "www.salonprofessionals.net",
        ),
    },
}

# ---------------------------------------------------------------------------------------------
# Generic templates (shared by every category)
# ---------------------------------------------------------------------------------------------

_GENERIC_STEPS: tuple[str, ...] = (
    "Read through all the steps before you start to {task} so you know what to expect.",
    "Set aside [15|20|30] minutes of uninterrupted time so you do not have to rush.",
    "Go slowly the first time you {task}, and speed up once you feel comfortable.",
    "Write down what you try while {doing} so you can repeat what works.",
    "Ask someone with experience to watch you {task} and point out anything you missed.",
    "Compare your results with photos or videos from people who are experienced at {doing}.",
    "Double-check your work once you finish to make sure no step was skipped.",
    "Make a short checklist of everything involved and tick items off as you go.",
    "Look up a short video tutorial if any part of {doing} seems confusing.",
    "Practice the hardest part a few times until it starts to feel natural.",
    "Expect to make a few mistakes the first time you {task}, and learn from each one.",
    "If something does not look right, stop and recheck the previous step before continuing.",
    "Plan a specific day and time to {task} so it does not keep getting postponed.",
    "Learn the basic terms people use when they talk about {doing}.",
    "Start with the simplest method for {doing}, then try more advanced techniques later.",
    "Be patient with yourself, since most people need a few tries to {task} well.",
    "Choose a quiet time of day to {task} so you can concentrate fully.",
    "Keep a list of questions that come up while {doing} and look them up afterward.",
    "Slow down and reread the instructions whenever you feel stuck.",
    "Repeat the process [as needed|if necessary] until you are happy with the results.",
    "Look for a local class or online course if you want more structured help.",
    "Reward yourself once you successfully {task} so you stay motivated.",
    "Finish by noting what went well and what you would change next time.",
    "Give yourself extra time, since {doing} often takes longer than expected the first time.",
    "Break the process into smaller stages and finish one before starting the next.",
    "Talk through your plan with a friend who has done this before.",
    "Keep your goal in mind: you want to {task} correctly, not just quickly.",
    "Pause after each stage and make sure everything still looks right.",
    "Check a second source if two sets of instructions disagree.",
    "Stay flexible and adjust the steps to fit your own situation.",
)

_PHYSICAL_STEPS: tuple[str, ...] = (
    "Gather {tool} and {tool2} and keep them within easy reach.",
    "Work in a well-lit area so you can see exactly what you are doing.",
    "Check {the_o} carefully for damage or problems before you go any further.",
    "Keep {tool} nearby in case you need it partway through.",
    "Read any directions that came with {tool} before you rely on it.",
    "Clean up your work area as soon as you finish {doing}.",
    "Handle {the_o} gently and set {it} on a clean, flat surface while you work.",
    "Set a timer for [5|10|15] minutes so you do not lose track of time while {doing}.",
    "Take a photo of {the_o} before you start so you can compare the results later.",
    "Keep a damp cloth handy to wipe up spills and messes as you work.",
    "Put {tool} away in a dry place as soon as you are done.",
    "Keep {the_o} out of reach of children and pets whenever you take a break.",
    "Inspect {the_o} one more time and fix any small problems you notice.",
    "Measure carefully before you commit, especially when {doing} for the first time.",
    "Ask a friend to help you {task} if you need an extra pair of hands.",
    "Wear comfortable clothes that you do not mind getting dirty.",
    "Lay out everything you need on a clear surface before you begin.",
    "Clear enough space around you so you can move freely and safely.",
)

_GENERIC_TIPS: tuple[str, ...] = (
    "If this is your first time, try to {task} on a day when you have no other plans.",
    "Keep notes on what worked so the next time you {task} goes faster.",
    "Watching someone experienced can make the tricky parts of {doing} much clearer.",
    "Do not be discouraged if your first attempt is not perfect; practice makes a big difference.",
    "Ask for advice from a local expert or community group that focuses on {field}.",
    "Break the job into smaller pieces if {doing} feels overwhelming.",
    "Set realistic expectations, since results can vary from person to person.",
    "Look for recent guides, because recommended methods for {doing} change over time.",
    "Invite a friend to join you, since {doing} is often more fun with company.",
    "Celebrate your progress, even if it feels slow at first.",
)

_GENERIC_WARNINGS: tuple[str, ...] = (
    "Do not rush the last steps, since that is when many mistakes happen.",
    "Be skeptical of products or services that promise instant results.",
)

_PHYSICAL_WARNINGS: tuple[str, ...] = (
    "Stop right away if anything feels unsafe while you are {doing}.",
    "Follow all instructions that came with your tools and products.",
)

_INTRO_OPENERS: tuple[str, ...] = (
    "Learning how to {task_full} is easier than it looks, even if you have never tried it before.",
    "Whether you are a total beginner or just need a refresher, {doing} comes down to a few simple steps.",
    "If you have been wondering how to {task_full}, you are in the right place.",
    "{Doing} is a handy skill that can save you time, money, and frustration.",
    "Knowing how to {task_full} makes everyday life a little easier.",
    "Lots of people put off {doing} because it seems complicated, but it really is not.",
    "Want to {task_full} without the guesswork?",
    "{Doing} does not require special training, just a bit of preparation.",
)

_INTRO_CLOSERS: tuple[str, ...] = (
    "This guide walks you through the process step by step, with tips to help you avoid common mistakes.",
    "Read on to learn exactly what to do, what you will need, and what to watch out for.",
    "Below, you will find [two|a few|several] proven approaches, plus expert tips to make the job easier.",
    "Keep reading for clear instructions and advice from people who do this every day.",
    "We will cover the basics first and then share a few tricks to get better results.",
    "Follow the steps below and you will be done sooner than you think.",
)

_REF_SECTIONS = ("articles", "guides", "resources", "learn", "library", "topics", "how-to")
_BOOK_TITLES = (
    "The Complete Guide to {F}",
    "{F} Made Simple",
    "Everyday {F}",
    "The Beginner's Handbook of {F}",
    "Practical {F}",
)
_PUBLISHERS = (
    "Harbor Press",
    "Northfield Books",
    "Bluebird Publishing",
    "Cedar Lane Press",
    "Summit House",
    "Riverbend Media",
)

# ---------------------------------------------------------------------------------------------
# Leaf categories
# ---------------------------------------------------------------------------------------------
# singles: one topic per line, "Verb|object|flags|qualifier" (flags: p = plural object,
#   m = mass noun, b = bare object, x = no natural definite object; "= How to ..." overrides the
#   title verbatim). groups: one near-duplicate family per line, members separated by " ; ".
# things: "; "-separated supplies as used in a sentence ("a baking sheet").

_LEAVES: tuple[dict[str, Any], ...] = (
    # ----- Food and Entertaining -----
    {
        "name": "Seafood",
        "parent": "Food and Entertaining",
        "domain": "food",
        "phys": True,
        "singles": """
            Steam|mussels|p
            Devein|shrimp|p
            Sear|salmon fillets|p
            Shuck|oysters|p
            Fillet|a fish|
            Make|crab cakes|p
            Cook|frozen shrimp|p
            Thaw|frozen fish|m
            Grill|swordfish steaks|p
            Make|clam chowder|m
            Poach|cod fillets|p
            Crack|crab legs|p
            Season|tilapia|m
            Fry|calamari|m
        """,
        "groups": """
            Bake|lobster tails|p ; Grill|lobster tails|p ; Broil|lobster tails|p ; Boil|lobster tails|p
            Clean|squid|m ; Clean|a whole fish| ; Clean|clams|p
            Tell|if fish is cooked|x ; Know|when salmon is done|x
        """,
        "things": "kitchen shears; a baking sheet; a meat thermometer; a paring knife; a large stockpot; a fish spatula; a cutting board; paper towels",
        "steps": (
            "Rinse {the_o} under cold running water and pat {it} dry with paper towels.",
            "Cook until the flesh turns opaque and reaches 145°F on a meat thermometer.",
            "Brush {the_o} with melted butter mixed with minced garlic and a pinch of paprika.",
            "Squeeze fresh lemon juice over {the_o} just before you serve {it}.",
            "Buy seafood that smells fresh and briny rather than fishy or sour.",
            "Keep raw seafood on ice or in the coldest part of the fridge until you are ready.",
            "Preheat the oven or grill to [400|425|450]°F before you start {doing}.",
        ),
    },
    {
        "name": "Baking",
        "parent": "Food and Entertaining",
        "domain": "food",
        "phys": True,
        "singles": """
            Make|sourdough starter|m
            Bake|banana bread|m
            Make|pie crust from scratch|x
            Frost|a layer cake|
            Make|buttercream frosting|m
            Bake|chocolate chip cookies|p
            Proof|yeast|m
            Bake|a cheesecake|
            Make|cinnamon rolls|p
            Knead|bread dough|m
            Bake|a sponge cake|
            Make|macarons|p
            Temper|chocolate|m
        """,
        "groups": """
            Soften|butter|m ; Bring|butter to room temperature|x
            Substitute|baking soda for baking powder|x ; Substitute|baking powder for baking soda|x ; Replace|eggs in baking|x
            Make|blueberry muffins|p ; Make|banana muffins|p ; Make|bran muffins|p
        """,
        "things": "a stand mixer; a rolling pin; a baking sheet; parchment paper; a cooling rack; measuring cups; a pastry brush; a loaf pan; a kitchen scale",
        "steps": (
            "Preheat the oven to [325|350|375]°F and let it heat fully before {doing}.",
            "Weigh the flour on a kitchen scale instead of scooping it for more consistent results.",
            "Line the pan with parchment paper so nothing sticks while {doing}.",
            "Bring eggs and butter to room temperature so the batter mixes smoothly.",
            "Rotate the pan halfway through baking so everything browns evenly.",
            "Let baked goods cool on a wire rack for at least [10|15|20] minutes before you cut or frost them.",
        ),
    },
    {
        "name": "Drinks",
        "parent": "Food and Entertaining",
        "domain": "food",
        "phys": True,
        "singles": """
            Make|cold brew coffee|m
            Make|sweet tea|m
            Brew|loose leaf tea|m
            Make|a green smoothie|
            Make|hot chocolate from scratch|x
            Make|lemonade|m
            Froth|milk without a frother|x
            Make|a latte at home|x
            Make|kombucha|m
            Brew|coffee in a French press|x
            Make|chai tea|m
            Make|a mocktail|
            Make|homemade ginger ale|m
        """,
        "groups": """
            Make|iced coffee|m ; Make|iced tea|m ; Make|an iced latte|
            Make|a mojito| ; Make|a virgin mojito| ; Muddle|mint for cocktails|x
        """,
        "things": "a countertop blender; a French press; a milk frother; a cocktail shaker; a fine strainer; a large pitcher; an electric kettle; a coffee grinder; ice cube trays",
        "steps": (
            "Use filtered water, since tap water with a strong taste can spoil the flavor.",
            "Chill your glasses in the freezer for [10|15] minutes before you pour.",
            "Stir the drink well so the sweetener dissolves completely.",
            "Taste and add more ice, sugar, or citrus a little at a time.",
            "Steep or brew for the recommended time, since going longer makes the drink bitter.",
        ),
    },
    # ----- Home and Garden -----
    {
        "name": "Kitchen Cleaning",
        "parent": "Home and Garden",
        "domain": "home",
        "phys": True,
        "singles": """
            Clean|an oven|
            Descale|an electric kettle|
            Clean|a microwave||with lemon
            Clean|a burnt pot|
            Remove|rust from cast iron|x
            Clean|a garbage disposal|
            Degrease|kitchen cabinets|p
            Clean|a range hood filter|
            Clean|a blender|
            Remove|hard water stains from a sink|x
            Clean|a dishwasher filter|
            Unclog|a kitchen sink|
            Clean|stovetop grates|p
        """,
        "groups": """
            Clean|a nonstick pan| ; Clean|a cast iron pan| ; Clean|a stainless steel pan|
            Clean|a Keurig||with vinegar ; Descale|a Keurig| ; Clean|a coffee maker||with vinegar
            Clean|a refrigerator| ; Deodorize|a refrigerator|
        """,
        "things": "white vinegar; baking soda; a scrub brush; a microfiber cloth; dish soap; rubber gloves; a spray bottle; a plastic scraper; an old toothbrush",
        "steps": (
            "Make sure any appliance is unplugged and cool before you start {doing}.",
            "Mix equal parts white vinegar and warm water in a spray bottle.",
            "Sprinkle baking soda over stubborn spots and let it sit for [10|15|20] minutes.",
            "Scrub in small circles with a soft brush so you do not scratch the surface.",
            "Rinse {the_o} thoroughly and dry {it} with a microfiber cloth.",
            "Avoid steel wool and harsh abrasives on coated or delicate surfaces.",
            "Open a window or run the range hood fan while you clean to keep the air fresh.",
        ),
    },
    {
        "name": "Home Repair",
        "parent": "Home and Garden",
        "domain": "home",
        "phys": True,
        "singles": """
            Fix|a running toilet|
            Replace|a light switch|
            Fix|a leaky faucet|
            Unclog|a bathtub drain|
            Replace|a cabinet hinge|
            Caulk|a bathtub|
            Fix|a squeaky door|
            Install|a dimmer switch|
            Reset|a tripped circuit breaker|
            Replace|a toilet flapper|
            Fix|a sticking drawer|
            Weatherstrip|a door|
            Repair|a screen door|
        """,
        "groups": """
            Change|a lightbulb in a recessed light| ; Replace|a recessed light bulb| ; Change|a lightbulb in a ceiling fan|
            Patch|a hole in drywall| ; Fix|a hole in a wall| ; Repair|a crack in plaster|
            Hang|a heavy mirror| ; Hang|a picture without nails|x ; Hang|shelves on drywall|x
        """,
        "things": "a screwdriver set; an LED flashlight; a sturdy step ladder; a utility knife; an adjustable wrench; a voltage tester; needle-nose pliers; a putty knife; a cordless drill; safety glasses",
        "steps": (
            "Turn off power at the breaker box before you touch any wiring.",
            "Shut off the water supply valve before you take anything apart.",
            "Use a voltage tester to confirm the circuit is dead before you begin.",
            "Take a photo of the setup before you disassemble anything so reassembly is easier.",
            "Bring the old part to the hardware store so you can buy an exact match.",
            "Tighten fittings snugly by hand, then add a quarter turn with a wrench.",
        ),
    },
    {
        "name": "Gardening",
        "parent": "Home and Garden",
        "domain": "home",
        "phys": True,
        "singles": """
            Grow|tomatoes in containers|x
            Start|a compost pile|
            Prune|rose bushes|p
            Plant|garlic|m
            Grow|basil indoors|x
            Transplant|seedlings|p
            Get Rid of|aphids|p
            Divide|hostas|p
            Build|a raised garden bed|
            Overwinter|geraniums|p
            Mulch|a flower bed|
            Harvest|lettuce|m
            Grow|strawberries|p
        """,
        "groups": """
            Water|succulents|p ; Propagate|succulents|p ; Repot|succulents|p
            Kill|weeds naturally|x ; Remove|weeds without chemicals|x
            Plant|tulip bulbs|p ; Plant|daffodil bulbs|p
        """,
        "things": "garden gloves; a hand trowel; pruning shears; a watering can; potting soil; organic mulch; a garden hose; a garden fork",
        "steps": (
            "Check the soil with your finger and water only when the top inch feels dry.",
            "Work a few inches of compost into the soil before you plant.",
            "Choose a spot that gets at least [6|8] hours of direct sunlight a day.",
            "Water early in the morning so the leaves dry before evening.",
            "Spread a layer of mulch to hold moisture and keep weeds down.",
            "Look under the leaves every few days for pests or yellowing.",
        ),
    },
    {
        "name": "Laundry",
        "parent": "Home and Garden",
        "domain": "home",
        "phys": True,
        "singles": """
            Remove|red wine stains|p
            Wash|a down comforter|
            Get|sweat stains out of shirts|x
            Wash|a weighted blanket|
            Remove|grease stains from clothes|x
            Shrink|a cotton shirt|
            Fold|a fitted sheet|
            Whiten|yellowed pillowcases|p
            Iron|a dress shirt|
            Remove|slime from clothes|x
            Wash|sneakers in a washing machine|x
            Dry|clothes without a dryer|x
        """,
        "groups": """
            Remove|blood stains|p ; Get|blood out of sheets|x ; Remove|dried blood from fabric|x
            Soften|towels|p ; Make|towels fluffy again|x
            Wash|a wool sweater| ; Hand Wash|a sweater| ; Unshrink|a wool sweater|
        """,
        "things": "laundry detergent; a stain remover; oxygen bleach; a mesh laundry bag; wool dryer balls; a drying rack; white vinegar; an old toothbrush",
        "steps": (
            "Check the care label and follow the water temperature it recommends.",
            "Treat stains as soon as possible, before heat from the dryer sets them.",
            "Blot stains from the outside in instead of rubbing, which spreads them.",
            "Turn garments inside out to protect colors and prints in the wash.",
            "Test any cleaner on a hidden seam first to make sure it does not fade the fabric.",
            "Air dry the item and check it before you put it in the dryer.",
        ),
    },
    # ----- Health -----
    {
        "name": "Mental Health",
        "parent": "Health",
        "domain": "health",
        "phys": False,
        "singles": """
            Stop|overthinking|x
            Calm|down during a panic attack|x
            Deal|with loneliness|x
            Build|self confidence|x
            Practice|mindfulness|x
            Stop|procrastinating|x
            Cope|with stress at work|x
            Let Go|of the past|x
            Start|journaling for mental health|x
            Manage|social anxiety|x
            Stop|negative self talk|x
            Recover|from burnout|x
        """,
        "groups": """
            Overcome|fear|x ; Conquer|your fears|x ; Overcome|a fear of heights|x
            Stop|worrying|x ; Stop|worrying about the future|x
        """,
        "things": "",
        "steps": (
            "Notice the thoughts that come up and name them without judging yourself.",
            "Take [five|ten] slow breaths, breathing in for four counts and out for six.",
            "Write down one small, realistic goal and take a step toward it today.",
            "Talk to someone you trust about how you are feeling.",
            "Reach out to a licensed therapist if the feelings last for weeks or get worse.",
            "Celebrate small wins to reinforce your progress.",
        ),
    },
    {
        "name": "First Aid",
        "parent": "Health",
        "domain": "health",
        "phys": True,
        "singles": """
            Treat|a minor burn|
            Stop|a nosebleed|
            Clean|a scrape|
            Remove|a splinter|
            Treat|a sprained ankle|
            Make|an ice pack|
            Treat|a blister|
            Remove|a tick|
            Wrap|a wrist with an elastic bandage|x
            Help|someone who is choking|x
            Treat|heat exhaustion|x
        """,
        "groups": """
            Perform|CPR on an adult|x ; Do|chest compressions|x ; Perform|CPR on a child|x
            Treat|a bee sting| ; Treat|a wasp sting| ; Treat|a jellyfish sting|
            Tell|if a cut needs stitches|x ; Know|when a wound needs stitches|x
        """,
        "things": "sterile gauze pads; an elastic bandage; antiseptic wipes; fine tweezers; disposable gloves; adhesive bandages; an instant cold pack",
        "steps": (
            "Wash your hands or put on disposable gloves before you touch the injury.",
            "Rinse the area with clean, cool running water for several minutes.",
            "Apply firm, steady pressure with sterile gauze for [5|10] minutes without peeking.",
            "Cover the area with a clean bandage and change it once a day.",
            "Call emergency services right away if the person has trouble breathing.",
            "Watch for redness, swelling, or warmth, which can be signs of infection.",
        ),
    },
    {
        "name": "Sleep",
        "parent": "Health",
        "domain": "health",
        "phys": False,
        "singles": """
            Fall Asleep|fast|x
            Wake Up|early|x
            Stop|snoring|x
            Fix|your sleep schedule|
            Take|a power nap|
            Sleep|on a plane|x
            Beat|jet lag|x
            Create|a bedtime routine|
            Sleep|with a stuffy nose|x
            Stop|hitting the snooze button|x
            Fall Asleep|after a night shift|x
        """,
        "groups": """
            Choose|a mattress| ; Choose|a pillow| ; Choose|a mattress topper|
            Sleep|better at night|x ; Get|better sleep|x ; Improve|sleep quality|x
        """,
        "things": "a sleep mask; foam earplugs; blackout curtains; a white noise machine; a supportive pillow",
        "steps": (
            "Go to bed and wake up at the same time every day, even on weekends.",
            "Keep your bedroom cool, around [60|65|67]°F, and as dark as possible.",
            "Stop looking at screens at least an hour before bed.",
            "Avoid caffeine after early afternoon, since it can stay in your system for hours.",
            "Get bright daylight within an hour of waking to reset your body clock.",
        ),
    },
    # ----- Computers and Electronics -----
    {
        "name": "Email and Messaging",
        "parent": "Computers and Electronics",
        "domain": "tech",
        "phys": False,
        "methods": ("Using the Desktop Website", "Using the Mobile App"),
        "singles": """
            Set Up|an email signature|
            Recall|an email in Outlook|x
            Block|an email address|
            Create|a Gmail account|
            Forward|emails automatically|x
            Unsend|a message on Instagram|x
            Schedule|an email in Gmail|x
            Mark|all emails as read|x
            Recover|a deleted email|
            Set Up|an out of office reply|
            Archive|old emails|p
            Delete|a Yahoo account|
        """,
        "groups": """
            Change|your Yahoo email address| ; Change|your Gmail address| ; Change|your Outlook email address|
            Reset|a Yahoo password| ; Recover|a forgotten Yahoo password|
            Unsubscribe|from email lists|x ; Stop|promotional emails|x ; Stop|spam emails|x
        """,
        "things": "",
        "steps": (
            "Sign in to your account on the website and open the Settings menu.",
            "Click the gear icon in the upper right corner to find the account options.",
            "Check your spam folder if the confirmation message does not arrive within a few minutes.",
            "Verify your identity with the code sent to your recovery phone number.",
            "Save your changes, then sign out and back in to confirm everything worked.",
            "Update your contacts and any linked services once you {task}.",
        ),
    },
    {
        "name": "Smartphones",
        "parent": "Computers and Electronics",
        "domain": "tech",
        "phys": False,
        "methods": ("Using an iPhone", "Using an Android Phone"),
        "singles": """
            Take|a screenshot on an iPhone|x
            Free Up|storage on an Android phone|x
            Turn Off|autocorrect|x
            Transfer|photos from an iPhone to a computer|x
            Find|a lost phone|
            Block|a phone number|
            Speed Up|a slow phone|
            Extend|phone battery life|x
            Clean|a phone charging port|
            Turn On|dark mode|x
            Set Up|voicemail|x
            Back Up|an Android phone|
            Fix|a phone that will not charge|x
        """,
        "groups": """
            Reset|an iPhone| ; Restore|an iPhone to factory settings|x ; Reset|an Android phone|
            Fix|a cracked phone screen| ; Replace|a cracked phone screen|
        """,
        "things": "a USB charging cable; a microfiber cleaning cloth; a wooden toothpick; a SIM eject tool",
        "steps": (
            "Open the Settings app and scroll down to find the option you need.",
            "Update your phone to the latest software version before you start.",
            "Plug your phone into a charger so the battery does not die partway through.",
            "Back up your photos and contacts to the cloud in case something goes wrong.",
            "Restart your phone by holding the power button, then try again.",
            "Tap the search bar at the top of Settings and type a keyword to jump straight to the option.",
        ),
    },
    {
        "name": "Windows",
        "parent": "Computers and Electronics",
        "domain": "tech",
        "phys": False,
        "methods": ("Using Windows 11", "Using Windows 10"),
        "singles": """
            Take|a screenshot on Windows|x
            Uninstall|a program in Windows 11|x
            Change|the default browser in Windows|x
            Speed Up|a slow computer|
            Open|Task Manager|x
            Find|your IP address on Windows|x
            Update|graphics drivers|p
            Create|a system restore point|
            Turn Off|Windows updates|x
            Map|a network drive|
            Split|the screen in Windows|x
            Check|your PC specs|x
            Enter|safe mode in Windows 10|x
        """,
        "groups": """
            Reset|a Windows password| ; Recover|a lost Windows password| ; Remove|the login password on Windows|x
            Connect|to Wi-Fi on Windows|x ; Fix|Wi-Fi that keeps disconnecting|x
            Clean Up|a hard drive| ; Free Up|disk space on Windows|x
        """,
        "things": "a USB flash drive; an external hard drive; an Ethernet cable",
        "steps": (
            "Press the Windows key and type the name of the setting you want to open.",
            "Right-click the Start button to open the quick access menu.",
            "Restart your computer after making the change so it takes effect.",
            "Sign in with an administrator account, since some options are locked for standard users.",
            "Save any open work before you start, in case Windows needs to restart.",
            "Open Settings with the Windows key plus I, then choose the section you need.",
        ),
    },
    # ----- Cars and Other Vehicles -----
    {
        "name": "Car Maintenance",
        "parent": "Cars and Other Vehicles",
        "domain": "vehicles",
        "phys": True,
        "singles": """
            Change|engine oil|m
            Check|tire pressure|m
            Jump Start|a car|
            Replace|windshield wipers|p
            Check|transmission fluid|m
            Replace|a car battery|
            Clean|foggy headlights|p
            Change|a cabin air filter|
            Top Off|coolant|m
            Rotate|tires|p
            Wax|a car|
            Replace|brake pads|p
            Clean|car seats|p
        """,
        "groups": """
            Change|a flat tire| ; Put On|a spare tire| ; Change|a tire on the side of the road|x
            Remove|scratches from a car|x ; Buff Out|a car scratch| ; Fix|a deep scratch on a car|x
            Defrost|a windshield| ; Defog|a windshield|
        """,
        "things": "a lug wrench; a car jack; a tire pressure gauge; jumper cables; nitrile gloves; a long funnel; an oil drain pan; shop towels",
        "steps": (
            "Park on level ground, set the parking brake, and turn off the engine.",
            "Check your owner's manual for the correct type and amount of fluid.",
            "Let the engine cool for at least [20|30] minutes before you open the hood.",
            "Wear gloves and eye protection when you work under the hood.",
            "Dispose of old fluids and parts at an auto parts store that accepts them.",
            "Start the car and check the dashboard for warning lights once you finish.",
        ),
    },
    {
        "name": "Bicycles",
        "parent": "Cars and Other Vehicles",
        "domain": "vehicles",
        "phys": True,
        "singles": """
            Adjust|bike brakes|p
            Lube|a bike chain|
            Raise|a bike seat|
            Adjust|bicycle gears|p
            True|a bike wheel|
            Fix|a slipped bike chain|
            Clean|a bicycle|
            Install|clipless pedals|p
            Choose|the right bike size|x
            Pump Up|a bike tire with a Presta valve|x
            Store|a bike for winter|x
            Replace|bike handlebar tape|m
        """,
        "groups": """
            Fix|a flat bike tire| ; Repair|a punctured bicycle tire| ; Patch|a bike inner tube|
            Ride|a bike without training wheels|x ; Teach|a child to ride a bike|x ; Learn|to ride a bike as an adult|x
        """,
        "things": "tire levers; a floor pump; a patch kit; a hex key set; chain lubricant; a bike repair stand; a clean rag",
        "steps": (
            "Shift into the smallest rear cog so the chain has some slack.",
            "Flip the bike upside down or mount it in a repair stand.",
            "Spin the wheel slowly and watch for wobbles or rubbing.",
            "Inflate the tire to the pressure printed on its sidewall.",
            "Take a short test ride around the block before a longer trip.",
            "Tighten bolts to the torque printed on the part, not as tight as possible.",
        ),
    },
    {
        "name": "Driving",
        "parent": "Cars and Other Vehicles",
        "domain": "vehicles",
        "phys": False,
        "singles": """
            Drive|a manual car|
            Merge|onto a highway|x
            Pass|a driving test|
            Back Up|a trailer|
            Drive|at night|x
            Change|lanes safely|x
            Handle|a skid|
            Drive|a stick shift uphill|x
            Get|a learner's permit|
            Save|gas while driving|x
            Stay|alert on a long drive|x
            Use|cruise control|x
        """,
        "groups": """
            Parallel Park|a car| ; Back Into|a parking space|x ; Park|in a tight spot|x
            Drive|in heavy rain|x ; Drive|in fog|x ; Drive|in snow|x
        """,
        "things": "",
        "steps": (
            "Adjust your seat and mirrors before you start the engine.",
            "Keep both hands on the wheel at the nine and three o'clock positions.",
            "Check your mirrors and blind spot before you change position on the road.",
            "Leave at least [three|four] seconds of following distance behind the car ahead.",
            "Practice in an empty parking lot before you try it in traffic.",
            "Signal early so other drivers know what you plan to do.",
        ),
    },
    # ----- Pets and Animals -----
    {
        "name": "Dogs",
        "parent": "Pets and Animals",
        "domain": "pets",
        "phys": True,
        "singles": """
            Trim|a dog's nails|
            Introduce|a new dog to your cat|x
            Stop|a dog from pulling on the leash|x
            Brush|a dog's teeth|
            Bathe|a dog|
            Socialize|a puppy|
            Stop|a puppy from biting|x
            Choose|the right dog food|x
            Help|a dog lose weight|x
            Calm|an anxious dog|
            Teach|a dog to fetch|x
        """,
        "groups": """
            Teach|a dog to sit|x ; Teach|a dog to stay|x ; Teach|a dog to lie down|x
            Crate Train|a puppy| ; Potty Train|a puppy| ; House Train|an older dog|
            Clean|a dog's ears| ; Check|a dog for ear mites|x
        """,
        "things": "dog treats; a slicker brush; dog nail clippers; a sturdy leash; a training clicker; dog shampoo; a wire dog crate",
        "steps": (
            "Reward your dog with a small treat and praise the moment it gets it right.",
            "Keep training sessions short, about [5|10] minutes, so your dog stays focused.",
            "Stay calm and patient, since dogs pick up on your frustration.",
            "Use the same command word every time so your dog is not confused.",
            "Ask your veterinarian for advice if the problem continues.",
            "Let your dog sniff and inspect new tools before you use them.",
        ),
    },
    {
        "name": "Cats",
        "parent": "Pets and Animals",
        "domain": "pets",
        "phys": True,
        "singles": """
            Litter Train|a kitten|
            Give|a cat a pill|x
            Stop|a cat from scratching furniture|x
            Trim|a cat's claws|
            Introduce|two cats|p
            Bathe|a cat|
            Calm|a stressed cat|
            Choose|the best cat litter|x
            Get|a cat to use a scratching post|x
            Keep|a cat off the counter|x
            Care|for a newborn kitten|x
            Play|with a cat|x
        """,
        "groups": """
            Tell|if a cat is sick|x ; Know|if your cat is in pain|x ; Tell|if a cat has a fever|x
            Clean|a litter box| ; Deodorize|a litter box| ; Set Up|a litter box|
        """,
        "things": "cat treats; a cat carrier; cat nail clippers; a soft towel; a wand toy; unscented litter; a scratching post",
        "steps": (
            "Approach your cat slowly and let it sniff your hand first.",
            "Work in a quiet room with the door closed so your cat cannot bolt.",
            "Wrap your cat loosely in a towel if it squirms or scratches.",
            "Offer a favorite treat afterward so your cat links the experience with something good.",
            "Call your vet if your cat stops eating for more than a day.",
        ),
    },
    {
        "name": "Aquariums",
        "parent": "Pets and Animals",
        "domain": "pets",
        "phys": True,
        "singles": """
            Cycle|a fish tank|
            Clean|aquarium gravel|m
            Set Up|a betta tank|
            Acclimate|new fish|p
            Lower|ammonia in a fish tank|x
            Feed|goldfish|p
            Treat|ich in fish|x
            Set Up|a planted aquarium|
            Clean|algae from aquarium glass|x
            Breed|guppies|p
            Choose|an aquarium filter|
            Keep|a fish tank clean|x
        """,
        "groups": """
            Do|a water change in an aquarium|x ; Change|aquarium water|m
            Care|for a betta fish|x ; Care|for goldfish|x ; Care|for an axolotl|x
        """,
        "things": "a gravel vacuum; water conditioner; an aquarium test kit; a small fish net; an algae scraper; a clean bucket",
        "steps": (
            "Test the water for ammonia, nitrite, and nitrate before you make changes.",
            "Treat tap water with a dechlorinator before adding it to the tank.",
            "Match the temperature of new water to the tank within a degree or two.",
            "Unplug the heater and filter before you put your hands in the tank.",
            "Never replace more than [25|30] percent of the water at one time.",
            "Watch your fish closely for a day afterward for signs of stress.",
        ),
    },
    # ----- Sports and Fitness -----
    {
        "name": "Exercise Equipment",
        "parent": "Sports and Fitness",
        "domain": "fitness",
        "phys": True,
        "singles": """
            Use|a rowing machine|
            Set Up|a squat rack|
            Use|resistance bands|p
            Choose|running shoes|p
            Use|a kettlebell||for beginners
            Choose|a jump rope|
            Use|an elliptical machine|
            Build|a home gym|
            Install|a doorway pull up bar|
            Use|adjustable dumbbells|p
            Choose|a weight bench|
            Use|an ab roller|
        """,
        "groups": """
            Choose|a foam roller| ; Use|a foam roller| ; Clean|a foam roller|
            Choose|a treadmill| ; Choose|an exercise bike| ; Choose|an elliptical trainer|
        """,
        "things": "a reusable water bottle; a gym towel; an exercise mat; a heart rate monitor; athletic shoes; sanitizing wipes",
        "steps": (
            "Adjust the seat, handles, or straps to fit your height before you start.",
            "Warm up for [5|10] minutes with light cardio before using any equipment.",
            "Keep your core tight and your back neutral throughout each movement.",
            "Start with light resistance and increase it only when your form stays solid.",
            "Wipe down the equipment after each use to keep it clean and grippy.",
            "Read the weight limit and safety labels printed on the equipment.",
        ),
    },
    {
        "name": "Yoga",
        "parent": "Sports and Fitness",
        "domain": "fitness",
        "phys": True,
        "singles": """
            Do|downward dog|x
            Do|crow pose|x
            Start|a home yoga practice|
            Do|sun salutations|x
            Breathe|during yoga|x
            Clean|a yoga mat|
            Do|a seated forward bend|x
            Choose|a yoga mat|
            Do|pigeon pose|x
            Meditate|after yoga|x
            Improve|flexibility with yoga|x
            Do|tree pose|x
        """,
        "groups": """
            Do|a handstand|x ; Do|a forearm stand|x ; Do|a headstand|x
            Do|yoga for back pain|x ; Relieve|lower back pain with yoga|x
        """,
        "things": "a yoga mat; yoga blocks; a yoga strap; a folded blanket; comfortable leggings",
        "steps": (
            "Move into the pose slowly and stop if you feel sharp pain.",
            "Breathe in and out through your nose at a slow, steady pace.",
            "Use a yoga block under your hands if you cannot reach the floor comfortably.",
            "Hold the position for [three|five|eight] slow breaths before releasing.",
            "Practice on an empty stomach, waiting about two hours after a meal.",
            "Keep a slight bend in your knees if your hamstrings feel tight.",
        ),
    },
    {
        "name": "Scooter Tricks",
        "parent": "Sports and Fitness",
        "domain": "fitness",
        "phys": True,
        "singles": """
            Tailwhip|on a scooter|x
            Barspin|on a scooter|x
            Grind|on a scooter|x
            Choose|a stunt scooter|
            Tighten|scooter handlebars|p
            Replace|scooter wheels|p
            Do|a fakie on a scooter|x
            Drop In|on a scooter|x
            Jump|stairs on a scooter|x
            Ride|a scooter at a skatepark|x
            Stop|on a kick scooter|x
        """,
        "groups": """
            Do|a 180 on a scooter|x = How to 180 on a Scooter ; Do|a 360 on a scooter|x = How to 360 on a Scooter ; Bunny Hop|on a scooter|x
            Fix|a loose scooter headset| ; Tighten|a scooter headset|
        """,
        "things": "a stunt scooter; a skate helmet; knee pads; elbow pads; a hex key set; grip tape",
        "steps": (
            "Practice on smooth, flat concrete away from cars and pedestrians.",
            "Roll at a slow, steady speed so you can stay in control.",
            "Bend your knees to absorb the landing and keep your weight centered.",
            "Turn your head and shoulders first, and let your hips and the deck follow.",
            "Wear a helmet and knee pads every time you practice.",
            "Break the trick into parts and master each one before you combine them.",
        ),
    },
    # ----- Finance and Business -----
    {
        "name": "Real Estate",
        "parent": "Finance and Business",
        "domain": "finance",
        "phys": False,
        "singles": """
            Get|preapproved for a mortgage|x
            Make|an offer on a house|
            Sell|a house by owner|x
            Choose|a real estate agent|
            Negotiate|a lower rent|
            Calculate|closing costs|p
            Read|a property survey|
            Rent|out a room|x
            Find|a good neighborhood|
            Prepare|for a home inspection|x
            Refinance|a mortgage|
            Buy|a foreclosed home|
        """,
        "groups": """
            Buy|an apartment||with no money down = How to Buy an Apartment With No Money Down ; Buy|a house||with no money down ; Buy|a condo||with bad credit
            Break|a lease| ; Get Out|of a lease early|x
        """,
        "things": "",
        "steps": (
            "Pull your credit report and fix any errors before you talk to lenders.",
            "Get quotes from at least [two|three] lenders and compare the annual percentage rates.",
            "Read the fine print on fees, penalties, and contingencies before you sign.",
            "Set a firm budget that includes taxes, insurance, and maintenance costs.",
            "Ask a real estate attorney to review the contract if anything is unclear.",
        ),
    },
    {
        "name": "Budgeting and Saving",
        "parent": "Finance and Business",
        "domain": "finance",
        "phys": False,
        "singles": """
            Make|a monthly budget|
            Build|an emergency fund|
            Pay Off|credit card debt|m
            Save|money on groceries|x
            Track|your spending|x
            Use|the envelope system|
            Start|a sinking fund|
            Lower|your electric bill|
            Save|for a vacation|x
            Stop|impulse buying|x
            Negotiate|a medical bill|
            Use|a budgeting app|
        """,
        "groups": """
            Save|money fast|x ; Save|money on a low income|x ; Save|$1000 in a month|x
            Pay Off|student loans faster|x ; Refinance|student loans|p
            Improve|your credit score|x ; Raise|your credit score fast|x
        """,
        "things": "",
        "steps": (
            "List every source of monthly income and every fixed bill in one place.",
            "Review your bank statements from the last [two|three] months to see where money goes.",
            "Set up an automatic transfer to savings on the day you get paid.",
            "Give every dollar a job so nothing is left unaccounted for.",
            "Check your progress each week and adjust categories that run over.",
        ),
    },
    {
        "name": "Taxes",
        "parent": "Finance and Business",
        "domain": "finance",
        "phys": False,
        "singles": """
            File|taxes for free|x
            Fill Out|a W-4 form|
            Claim|a dependent|
            Check|the status of a tax refund|x
            File|a tax extension|
            Calculate|self employment tax|m
            Deduct|home office expenses|p
            Amend|a tax return|
            Read|a W-2 form|
            Pay|estimated taxes|p
            Find|your adjusted gross income|x
            Keep|tax records organized|x
        """,
        "groups": """
            File|taxes as a freelancer|x ; File|taxes as an independent contractor|x ; Do|taxes for a small business|x
            Lower|your tax bill|x ; Reduce|taxable income|m
        """,
        "things": "",
        "steps": (
            "Gather your W-2s, 1099s, and receipts before you sit down to file.",
            "Double-check your Social Security number and bank details on every form.",
            "Keep copies of your return and supporting documents for at least [three|seven] years.",
            "Use the official IRS website or a reputable tax program to file electronically.",
            "Talk to a certified public accountant if your situation changed a lot this year.",
        ),
    },
    # ----- Relationships -----
    {
        "name": "Friendship",
        "parent": "Relationships",
        "domain": "relationships",
        "phys": False,
        "singles": """
            Apologize|to a friend|x
            End|a toxic friendship|
            Support|a grieving friend|x
            Reconnect|with an old friend|x
            Set|boundaries with friends|x
            Make|friends at a new school|x
            Deal|with a jealous friend|x
            Stay|friends after a breakup|x
            Keep|a long distance friendship alive|x
            Comfort|a friend who is sad|x
            Tell|a friend they hurt you|x
            Cheer Up|a friend|x
        """,
        "groups": """
            Be|a good friend to a guy|x ; Be|a good friend to a girl|x ; Be|a better friend|x
            Make|friends as an adult|x ; Find|friends in your 30s|x
        """,
        "things": "",
        "steps": (
            "Listen more than you talk, and ask follow-up questions about their life.",
            "Reach out first with a quick text instead of waiting for them to call.",
            "Keep the promises you make, even small ones like calling back.",
            "Respect their time and other relationships without getting jealous.",
            "Speak honestly but kindly when something bothers you.",
        ),
    },
    {
        "name": "Dating",
        "parent": "Relationships",
        "domain": "relationships",
        "phys": False,
        "singles": """
            Ask|someone out|x
            Flirt|over text|x
            Know|if a girl likes you|x
            Keep|a conversation going|x
            Get Over|a breakup|x
            Write|a dating profile|
            Make|a long distance relationship work|x
            Meet|your partner's parents|x
            Say|I love you for the first time|x
            Handle|rejection|x
            Apologize|to your partner|x
        """,
        "groups": """
            Know|if a guy likes you|x ; Tell|if a guy likes you|x ; Tell|if a guy likes you over text|x
            Plan|a first date| ; Plan|a surprise date| ; Plan|a cheap date night|
        """,
        "things": "",
        "steps": (
            "Be yourself instead of acting like someone you think they want.",
            "Pay attention to body language, like eye contact and leaning in.",
            "Choose a relaxed setting where you can talk without shouting.",
            "Respect a no and move on gracefully if they are not interested.",
            "Put your phone away so they have your full attention.",
        ),
    },
    # ----- Hobbies and Crafts -----
    {
        "name": "Knitting and Crochet",
        "parent": "Hobbies and Crafts",
        "domain": "crafts",
        "phys": True,
        "singles": """
            Cast On|knitting stitches|p
            Bind Off|in knitting|x
            Crochet|a granny square|
            Read|a knitting pattern|
            Block|a knitted sweater|
            Fix|a dropped stitch|
            Crochet|a beanie|
            Make|a slip knot|
            Join|a new ball of yarn|
            Knit|a cable stitch|
            Weave In|yarn ends|p
            Knit|a pair of mittens|
        """,
        "groups": """
            Knit|a scarf| ; Crochet|a scarf| ; Knit|an infinity scarf|
            Crochet|a magic ring| ; Make|a magic circle in crochet|x
        """,
        "things": "knitting needles; a crochet hook; worsted weight yarn; a tapestry needle; stitch markers; small scissors; a measuring tape",
        "steps": (
            "Check your gauge with a small swatch before you start the main project.",
            "Hold the yarn loosely so your stitches do not get too tight.",
            "Place a stitch marker at the start of each round so you do not lose count.",
            "Count your stitches at the end of every row.",
            "Use a tapestry needle to weave loose ends back into the fabric.",
        ),
    },
    {
        "name": "Painting",
        "parent": "Hobbies and Crafts",
        "domain": "crafts",
        "phys": True,
        "singles": """
            Paint|a sunset with acrylics|x
            Mix|skin tones in acrylic paint|x
            Stretch|a canvas|
            Paint|clouds|p
            Use|masking fluid|m
            Clean|oil paint brushes|p
            Paint|a galaxy|
            Varnish|an acrylic painting|
            Paint|en plein air|x
            Paint|a portrait|
            Do|a watercolor wash|
            Gesso|a canvas|
        """,
        "groups": """
            Paint|with watercolors|x ; Paint|with acrylics|x ; Paint|with gouache|x
            Pour|acrylic paint|m ; Do|an acrylic pour|
        """,
        "things": "acrylic paints; synthetic paint brushes; a palette knife; a stretched canvas; a rinse cup; paper towels; a table easel",
        "steps": (
            "Sketch the main shapes lightly in pencil before you add any paint.",
            "Work from the background to the foreground so layers sit naturally.",
            "Mix a little more paint than you think you need so colors stay consistent.",
            "Let each layer dry completely before you paint details on top.",
            "Step back every [10|15] minutes to look at the whole piece from a distance.",
            "Rinse your brush between colors so they stay clean and bright.",
        ),
    },
    {
        "name": "Woodworking",
        "parent": "Hobbies and Crafts",
        "domain": "crafts",
        "phys": True,
        "singles": """
            Build|a birdhouse|
            Sand|wood by hand|x
            Stain|a wood table|
            Cut|a dovetail joint|
            Use|a table saw safely|x
            Build|a bookshelf|
            Make|a cutting board|
            Fill|nail holes in wood|x
            Drill|a straight hole|
            Sharpen|a chisel|
            Apply|polyurethane|m
            Glue|wood together|x
        """,
        "groups": """
            Refinish|a dresser| ; Paint|a dresser| ; Strip|paint from a dresser|x
            Use|a pocket hole jig| ; Make|pocket hole joints|p
        """,
        "things": "a random orbit sander; assorted sandpaper; wood glue; bar clamps; a tape measure; safety glasses; a speed square; a dust mask",
        "steps": (
            "Measure twice and mark your cut line with a sharp pencil and square.",
            "Sand with the grain, working from [80|100]-grit up to 220-grit.",
            "Clamp your workpiece firmly so it cannot shift while you work.",
            "Wear safety glasses and hearing protection whenever power tools are running.",
            "Wipe away dust with a tack cloth before applying any finish.",
            "Test the stain or finish on a scrap piece of the same wood first.",
        ),
    },
    # ----- Travel -----
    {
        "name": "Trip Planning",
        "parent": "Travel",
        "domain": "travel",
        "phys": False,
        "singles": """
            Plan|a road trip|
            Find|cheap flights|p
            Travel|on a budget|x
            Exchange|currency|x
            Plan|a honeymoon|
            Pack|for a beach vacation|x
            Book|a hotel room|
            Get|travel insurance|x
            Travel|with a toddler|x
            Make|a travel itinerary|
            Travel|alone for the first time|x
            Upgrade|to business class|x
        """,
        "groups": """
            Get|through airport security fast|x ; Go Through|TSA security|x
            Pack|a suitcase| ; Pack|light for a week|x ; Pack|a carry on bag|
            Renew|a passport| ; Get|a passport for a child|x
        """,
        "things": "packing cubes; a luggage scale; a travel adapter; a passport holder; a travel pillow; a toiletry bag",
        "steps": (
            "Make digital copies of your passport and tickets and store them online.",
            "Check entry requirements and visa rules for your destination well ahead of time.",
            "Set fare alerts and compare prices over a few weeks before booking.",
            "Roll your clothes instead of folding them to save space.",
            "Tell your bank your travel dates so your card is not blocked.",
        ),
    },
    {
        "name": "Camping",
        "parent": "Travel",
        "domain": "travel",
        "phys": True,
        "singles": """
            Pitch|a tent|
            Build|a campfire|
            Choose|a campsite|
            Hang|a bear bag|
            Purify|water while camping|x
            Cook|over a campfire|x
            Stay|warm in a tent|x
            Set Up|a hammock|
            Pack|for a camping trip|x
            Go|camping with kids|x
            Choose|a sleeping bag|
            Leave|no trace|x
        """,
        "groups": """
            Start|a fire without matches|x ; Make|a fire with a flint and steel|x ; Start|a fire in the rain|x
            Go|backpacking for the first time|x ; Plan|a backpacking trip|
        """,
        "things": "a ground tarp; a bright headlamp; a camp stove; a water filter; a pocket knife; a first aid kit; parachute cord",
        "steps": (
            "Check the weather forecast and fire restrictions before you leave.",
            "Arrive before dark so you can set up while you can still see.",
            "Pick flat, high ground at least 200 feet from lakes and streams.",
            "Store food in a bear canister or hang it away from your tent.",
            "Pack out all trash and leave your site cleaner than you found it.",
            "Practice at home first so you are not figuring it out in the dark.",
        ),
    },
    # ----- Education and Communications -----
    {
        "name": "Mail and Shipping",
        "parent": "Education and Communications",
        "domain": "education",
        "phys": True,
        "singles": """
            Send|a certified letter|
            Write|a return address|
            Mail|a package|
            Track|a USPS package|
            Fold|a letter for an envelope|x
            Forward|your mail|x
            Buy|stamps online|x
            Write|a postcard|
            Ship|a package internationally|x
            Send|mail to a military address|x
            Seal|an envelope|
            Hold|your mail while on vacation|x
        """,
        "groups": """
            Address|a letter to England| ; Address|a letter to Australia| ; Address|an envelope to Germany|
            Ship|a package cheaply|x ; Send|a package for less|x
        """,
        "things": "postage stamps; a padded envelope; packing tape; a postal scale; a ballpoint pen",
        "steps": (
            "Write the recipient's name on the first line and the street address below it.",
            "Put the country name in capital letters on the last line for international mail.",
            "Weigh the item at the post office to make sure you use the right postage.",
            "Write your return address in the upper left corner of the envelope.",
            "Keep the tracking number or receipt until the item arrives safely.",
        ),
    },
    {
        "name": "Telephone",
        "parent": "Education and Communications",
        "domain": "education",
        "phys": False,
        "singles": """
            Leave|a professional voicemail|
            Answer|the phone professionally|x
            Call|a toll free number from abroad|x
            Make|a conference call|
            Find Out|who called you|x
            Call|a landline from a cell phone|x
            Use|a calling card|
            Record|a phone call|
            Stop|robocalls|x
            Transfer|a call on an office phone|x
            Set Up|call forwarding|x
            End|a phone call politely|x
        """,
        "groups": """
            Call|the Czech Republic from the United States|x ; Call|Poland from the United States|x ; Make|an international call to Europe|
            Use|WhatsApp to call abroad|x ; Make|free international calls|x
        """,
        "things": "",
        "steps": (
            "Dial the exit code first, then the country code, and then the local number.",
            "Check the time difference before you call so you do not wake anyone up.",
            "Drop the leading zero from the local number when you dial from abroad.",
            "Ask your carrier about international rates or add a travel plan before calling.",
            "Speak clearly and a little slower than normal on a long distance line.",
        ),
    },
    {
        "name": "Writing",
        "parent": "Education and Communications",
        "domain": "education",
        "phys": False,
        "singles": """
            Write|a cover letter|
            Write|a thesis statement|
            Write|a haiku|
            Start|a short story|
            Write|a persuasive essay|
            Proofread|your own writing|x
            Write|a book report|
            Outline|a novel|
            Write|a eulogy|
            Use|semicolons correctly|x
            Write|a formal email|
            Write|a limerick|
        """,
        "groups": """
            Write|a good conclusion| ; End|an essay| ; Write|a conclusion for a research paper|
            Cite|a website in MLA|x ; Cite|a website in APA|x ; Cite|a book in Chicago style|x
            Write|a thank you note| ; Write|a thank you letter after an interview|x
        """,
        "things": "",
        "steps": (
            "Write a rough draft quickly without stopping to fix every sentence.",
            "Read your draft out loud to catch awkward phrasing and missing words.",
            "Cut any sentence that does not support your main point.",
            "Ask a friend or teacher to read it and mark anything that is confusing.",
            "Check the required format, word count, and deadline before you begin.",
        ),
    },
    {
        "name": "Studying",
        "parent": "Education and Communications",
        "domain": "education",
        "phys": False,
        "singles": """
            Study|for a math test|x
            Take|Cornell notes|x
            Memorize|vocabulary words|p
            Study|for finals|x
            Stay|focused while studying|x
            Make|flashcards|p
            Read|a textbook efficiently|x
            Prepare|for the SAT|x
            Learn|a language on your own|x
            Use|the Pomodoro technique|
            Study|with ADHD|x
            Form|a study group|
        """,
        "groups": """
            Cram|for a test|x ; Study|the night before an exam|x ; Study|for a test in one day|x
            Memorize|a speech| ; Memorize|lines for a play|x ; Memorize|a poem|
        """,
        "things": "index cards; highlighter pens; a spiral notebook; a desk lamp; a study planner; sticky notes",
        "steps": (
            "Study in short sessions of [25|30|45] minutes with five-minute breaks in between.",
            "Quiz yourself instead of rereading, since recalling information builds memory.",
            "Silence your phone and put it in another room while you work.",
            "Explain the material out loud as if you were teaching it to a friend.",
            "Review the hardest material again the next day to lock it in.",
        ),
    },
    # ----- Personal Care and Style -----
    {
        "name": "Makeup",
        "parent": "Personal Care and Style",
        "domain": "style",
        "phys": True,
        "singles": """
            Apply|liquid eyeliner|m
            Contour|a round face|
            Apply|false eyelashes|p
            Make|lipstick last all day|x
            Choose|a foundation shade|
            Clean|makeup brushes|p
            Do|a natural makeup look|
            Apply|concealer under your eyes|x
            Fill In|your eyebrows|p
            Set|makeup with setting spray|x
            Remove|waterproof mascara|m
            Apply|blush for your face shape|x
        """,
        "groups": """
            Apply|CC cream|m ; Apply|BB cream|m ; Apply|tinted moisturizer|m
            Do|a smoky eye| ; Create|a smokey eye look|
        """,
        "things": "a makeup sponge; a foundation brush; makeup remover; a spoolie brush; cotton pads; a magnifying mirror",
        "steps": (
            "Start with a clean, moisturized face so products blend smoothly.",
            "Apply a thin layer first and build up coverage only where you need it.",
            "Blend the edges with a damp makeup sponge so there are no harsh lines.",
            "Check your makeup in natural light before you head out.",
            "Wash your brushes and sponges weekly to prevent breakouts.",
            "Tap off excess product on the back of your hand before it touches your face.",
        ),
    },
    {
        "name": "Hair Care",
        "parent": "Personal Care and Style",
        "domain": "style",
        "phys": True,
        "singles": """
            Curl|hair with a flat iron|x
            Wash|curly hair|m
            Get Rid of|frizzy hair|m
            Dye|hair at home|x
            Trim|your own bangs|p
            Grow|hair faster|x
            Use|a hair mask|
            Fix|split ends|p
            Style|short hair|m
            Detangle|hair without pain|x
            Make|a messy bun|
            Use|dry shampoo|m
        """,
        "groups": """
            Curl|hair without heat|x ; Curl|hair overnight|x ; Get|heatless curls|x
            Do|a French braid| ; Do|a Dutch braid| ; Do|a fishtail braid|
        """,
        "things": "a wide-tooth comb; heat protectant spray; a round brush; sectioning clips; a microfiber towel; elastic hair ties",
        "steps": (
            "Start with clean, fully dry hair unless the method says otherwise.",
            "Spray a heat protectant over your hair before you use any hot tools.",
            "Divide your hair into [three|four|six] sections and clip away the ones you are not using.",
            "Work in small sections so each piece gets even attention.",
            "Finish with a light hairspray or serum to keep flyaways down.",
            "Comb gently from the ends upward to avoid breakage.",
        ),
    },
    {
        "name": "Clothing and Fashion",
        "parent": "Personal Care and Style",
        "domain": "style",
        "phys": True,
        "singles": """
            Fold|a T-shirt|
            Hem|pants without sewing|x
            Dress|for a job interview|x
            Choose|jeans for your body type|x
            Tie|a scarf|
            Break In|leather boots|p
            Build|a capsule wardrobe|
            Remove|pilling from sweaters|x
            Sew|on a button|x
            Dress|business casual|x
            Measure|your bra size|x
            Match|a belt with shoes|x
        """,
        "groups": """
            Tie|a tie| ; Tie|a Windsor knot| ; Tie|a bow tie|
            Stretch|shoes that are too tight|x ; Stretch|leather shoes|p
        """,
        "things": "a sewing needle; matching thread; a lint roller; a fabric shaver; a measuring tape; sharp fabric scissors",
        "steps": (
            "Try the outfit on in front of a full-length mirror before you leave.",
            "Check the fabric care label so you do not damage the material.",
            "Choose colors that complement each other, such as navy with white or camel.",
            "Press the garment with a warm iron to remove creases first.",
            "Pay attention to fit at the shoulders, since that is hardest to alter.",
        ),
    },
)

# ---------------------------------------------------------------------------------------------
# Authors
# ---------------------------------------------------------------------------------------------

_FIXED_AUTHORS: tuple[tuple[str, str, str, tuple[str, ...], str], ...] = (
    # (name, plain name, role, parent categories (empty = generalist), field)
    (
        "Trudi Griffin, LPC, MS",
        "Trudi Griffin",
        "Licensed Professional Counselor",
        ("Health", "Relationships"),
        "addiction and mental health counseling",
    ),
    (
        "James Sears",
        "James Sears",
        "wikiHow Staff Writer",
        (),
        "researching and writing how-to guides",
    ),
)

_AUTHOR_PROFILES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    # (role, credential or "", parent categories, field)
    ("Board Certified Physician", "MD", ("Health",), "family medicine"),
    ("Registered Nurse", "RN", ("Health",), "emergency and urgent care"),
    ("Clinical Psychologist", "PsyD", ("Health", "Relationships"), "cognitive behavioral therapy"),
    ("Licensed Marriage and Family Therapist", "LMFT", ("Relationships",), "couples counseling"),
    ("Sleep Researcher", "PhD", ("Health",), "sleep science"),
    ("Professional Chef", "", ("Food and Entertaining",), "restaurant kitchens"),
    ("Pastry Chef", "", ("Food and Entertaining",), "baking and pastry arts"),
    ("Cleaning Specialist", "", ("Home and Garden",), "residential cleaning"),
    ("Master Electrician", "", ("Home and Garden",), "residential wiring and lighting"),
    ("Master Gardener", "", ("Home and Garden",), "vegetable gardening and landscape care"),
    ("Computer Repair Technician", "", ("Computers and Electronics",), "hardware troubleshooting"),
    ("Technology Writer", "", ("Computers and Electronics",), "consumer technology"),
    ("ASE Certified Mechanic", "", ("Cars and Other Vehicles",), "automotive repair"),
    ("Bicycle Mechanic", "", ("Cars and Other Vehicles",), "bicycle repair and fitting"),
    ("Driving Instructor", "", ("Cars and Other Vehicles",), "new driver education"),
    ("Veterinarian", "DVM", ("Pets and Animals",), "small animal medicine"),
    ("Professional Dog Trainer", "CPDT-KA", ("Pets and Animals",), "positive reinforcement"),
    ("Certified Personal Trainer", "NASM-CPT", ("Sports and Fitness",), "strength training"),
    ("Registered Yoga Teacher", "RYT", ("Sports and Fitness",), "vinyasa and restorative yoga"),
    ("Action Sports Coach", "", ("Sports and Fitness",), "scooter and skateboard coaching"),
    ("Certified Public Accountant", "CPA", ("Finance and Business",), "tax preparation"),
    ("Certified Financial Planner", "CFP", ("Finance and Business",), "household budgeting"),
    ("Real Estate Broker", "", ("Finance and Business",), "residential real estate"),
    ("Dating Coach", "", ("Relationships",), "dating and communication coaching"),
    ("Fiber Artist", "", ("Hobbies and Crafts",), "knitting and crochet design"),
    ("Professional Artist", "MFA", ("Hobbies and Crafts",), "painting and illustration"),
    ("Professional Woodworker", "", ("Hobbies and Crafts",), "furniture making"),
    ("Travel Writer", "", ("Travel",), "budget travel"),
    ("Outdoor Educator", "", ("Travel", "Sports and Fitness"), "camping and backcountry skills"),
    ("English Teacher", "MA", ("Education and Communications",), "writing instruction"),
    ("Academic Tutor", "MEd", ("Education and Communications",), "study skills and test prep"),
    ("Communications Specialist", "", ("Education and Communications",), "business etiquette"),
    ("Professional Makeup Artist", "", ("Personal Care and Style",), "bridal and editorial makeup"),
    ("Licensed Cosmetologist", "", ("Personal Care and Style",), "hair cutting and coloring"),
    ("Fashion Stylist", "", ("Personal Care and Style",), "personal styling"),
    ("wikiHow Staff Writer", "", (), "researching and writing how-to guides"),
)

_FIRST_NAMES = _words(
    """Alicia Ben Carmen Daniel Elena Farid Grace Hector Irene Jonah Keiko Luis Maya Nikhil
    Olivia Pedro Quinn Rachel Samuel Tanya Umar Vera Wesley Ximena Yusuf Zoe Amara Bryce Celeste
    Dmitri Esther Felix Gabriela Howard Ingrid Jasper Kendra Leon Marisol Nathan Opal Priya Reuben
    Sofia Tobias Uma Victor Willa Andre Bianca Colin Delia Emmett Fiona Gideon Hana Isaac Julia
    Kofi Lena"""
)
_LAST_NAMES = _words(
    """Abbott Bianchi Castillo Dawson Ellison Fischer Gallagher Hoang Iverson Jimenez Kowalski
    Lindqvist Mendoza Nakamura Okafor Petrov Quintero Rosales Schneider Thornton Underwood Vasquez
    Whitfield Yamada Zimmerman Albright Brennan Chandra Delgado Engel Foster Gupta Hartley Ibarra
    Jansen Kaplan Larsen Moreau Novak Ortega Patel Reyes Sullivan Tanaka Upton Varga Walsh Young
    Adeyemi Bauer Caldwell Dubois Ferreira Holm Keller Lowry Marsh Nguyen"""
)
_CITIES = (
    "Portland, Oregon",
    "Austin, Texas",
    "Madison, Wisconsin",
    "Denver, Colorado",
    "Raleigh, North Carolina",
    "Minneapolis, Minnesota",
    "San Diego, California",
    "Boston, Massachusetts",
    "Columbus, Ohio",
    "Tucson, Arizona",
    "Richmond, Virginia",
    "Seattle, Washington",
)
_SCHOOLS = (
    "the University of Michigan",
    "Ohio State University",
    "the University of Oregon",
    "Boston University",
    "the University of Arizona",
    "Marquette University",
    "Colorado State University",
    "the University of Georgia",
)

_N_AUTHORS = 60


def _build_authors(rng: Random) -> list[dict[str, Any]]:
    """Authors with their output fields plus a private ``_parents`` key (areas of expertise)."""
    specs: list[tuple[str, str, str, tuple[str, ...], str]] = [*_FIXED_AUTHORS]
    profiles = list(_AUTHOR_PROFILES)
    extra = rng.sample(profiles, _N_AUTHORS - len(_FIXED_AUTHORS) - len(profiles))
    chosen = profiles + extra
    rng.shuffle(chosen)
    used = {"Trudi Griffin", "James Sears"}
    firsts = list(_FIRST_NAMES)
    lasts = list(_LAST_NAMES)
    for role, cred, parents, field in chosen:
        while True:
            first, last = rng.choice(firsts), rng.choice(lasts)
            if f"{first} {last}" not in used:
                break
        used.add(f"{first} {last}")
        plain = f"{first} {last}"
        name = f"{plain}, {cred}" if cred else plain
        specs.append((name, plain, role, parents, field))

    authors: list[dict[str, Any]] = []
    for name, plain, role, parents, field in specs:
        short = plain.split()[0]
        years = rng.randint(4, 28)
        bio = (
            f"{plain} is {_a_an(role)} {role} based in {rng.choice(_CITIES)} with {years} years of "
            f"experience in {field}."
        )
        extra_fact = rng.randrange(4)
        if extra_fact == 0:
            bio += f" {short} holds a degree from {rng.choice(_SCHOOLS)}."
        elif extra_fact == 1:
            bio += (
                f" {short} has contributed to more than {rng.randint(2, 40) * 5} wikiHow articles."
            )
        elif extra_fact == 2:
            bio += f" {short} also teaches community workshops for beginners."
        authors.append(
            {
                "name": name,
                "slug": _slugify(name),
                "bio": bio,
                "role": role,
                "_parents": parents,
            }
        )
    return authors


# ---------------------------------------------------------------------------------------------
# Topic parsing
# ---------------------------------------------------------------------------------------------


def _parse_member(raw: str) -> dict[str, Any]:
    """Parse one "Verb|object|flags|qualifier [= How to ...]" topic spec."""
    spec, _, override = raw.partition(" = ")
    parts = [p.strip() for p in spec.split("|")]
    parts += [""] * (4 - len(parts))
    verb, obj, flags, qual = parts[:4]
    first, _, rest = obj.partition(" ")
    if first in ("a", "an"):
        the_o = "the " + rest
    elif first in ("your", "the") or "b" in flags:
        the_o = obj
    else:
        the_o = "the " + obj
    core = f"{verb} {obj}" + (f" {qual}" if qual else "")
    title = override.strip() if override else "How to " + _titlecase(core)
    task = f"{verb.lower()} {obj}"
    return {
        "verb": verb,
        "obj": obj,
        "qual": qual,
        "title": title,
        "task": task,
        "task_full": task + (f" {qual}" if qual else ""),
        "doing": f"{_gerund(verb)} {obj}",
        "the_o": None if "x" in flags else the_o,
        "it": "them" if "p" in flags else "it",
        "flags": flags,
        "fixed": bool(override),
    }


def _lines(block: str) -> list[str]:
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def _things(block: str) -> list[tuple[str, str]]:
    """(in-sentence form, display form) pairs: "a baking sheet" -> "Baking sheet"."""
    out: list[tuple[str, str]] = []
    for item in (s.strip() for s in block.split(";")):
        if not item:
            continue
        first, _, rest = item.partition(" ")
        display = rest if first in ("a", "an") else item
        out.append((item, _cap(display)))
    return out


# ---------------------------------------------------------------------------------------------
# Text generation
# ---------------------------------------------------------------------------------------------

_LEAF_THINGS: dict[str, list[tuple[str, str]]] = {
    leaf["name"]: _things(leaf["things"]) for leaf in _LEAVES
}

_SLOT = re.compile(r"\{(\w+)\}")
_ALT = re.compile(r"\[([^\[\]]+)\]")


def _usable(tpl: str, ctx: dict[str, str | None]) -> bool:
    return all(ctx.get(name) is not None for name in _SLOT.findall(tpl))


def _fill(tpl: str, ctx: dict[str, str | None], rng: Random) -> str:
    text = _ALT.sub(lambda m: rng.choice(m.group(1).split("|")), tpl)
    text = _SLOT.sub(lambda m: str(ctx[m.group(1)]), text)
    return _cap(text)


def _draw(
    pools: list[list[str]],
    weights: list[float],
    ctx: dict[str, str | None],
    rng: Random,
    used: set[str],
    lo: int = 6,
    hi: int = 25,
) -> str | None:
    """Pop templates from weighted pools until one fills to a fresh sentence of lo..hi words."""
    while any(pools):
        live = [i for i, p in enumerate(pools) if p]
        idx = rng.choices(live, weights=[weights[i] for i in live])[0]
        tpl = pools[idx].pop()
        if not _usable(tpl, ctx):
            continue
        text = _fill(tpl, ctx, rng)
        if text in used or not lo <= len(text.split()) <= hi:
            continue
        used.add(text)
        return text
    return None


def _shuffled(items: Any, rng: Random) -> list[str]:
    out = list(items)
    rng.shuffle(out)
    return out


def _date_text(d: date) -> str:
    return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"


_DATE0 = date(2019, 1, 1)
_DATE_SPAN = (date(2023, 12, 31) - _DATE0).days + 1


def _references(
    rng: Random,
    art_slug: str,
    topic_slug: str,
    dom: dict[str, Any],
    experts: list[dict[str, Any]],
) -> list[str]:
    refs: list[str] = []
    n = rng.choices(range(1, 9), weights=[6, 10, 12, 12, 9, 6, 4, 3])[0]
    interviewed = False
    for _ in range(n):
        kind = rng.random()
        if kind < 0.15 and experts and not interviewed:
            interviewed = True
            who = rng.choice(experts)
            d = _DATE0 + timedelta(days=rng.randrange(_DATE_SPAN))
            ref = f"{who['name']}. {who['role']}. Expert Interview. {d.day} {_MONTHS[d.month - 1]} {d.year}."
        elif kind < 0.27:
            last = rng.choice(_LAST_NAMES)
            initial = rng.choice(_FIRST_NAMES)[0]
            book = rng.choice(_BOOK_TITLES).replace("{F}", _titlecase(dom["field"]))
            ref = f"{last}, {initial}. ({rng.randint(2005, 2022)}). {book}. {rng.choice(_PUBLISHERS)}."
        else:
            host = rng.choice(dom["refs"])
            section = rng.choice(_REF_SECTIONS)
            path = topic_slug if rng.random() < 0.6 else art_slug.lower()
            suffix = rng.choice(("", "", "", f"-{rng.randint(2, 99)}", "-guide", "-faq"))
            ref = f"https://{host}/{section}/{path}{suffix}"
        if ref not in refs:
            refs.append(ref)
    return refs


def _write_article(
    rng: Random,
    topic: dict[str, Any],
    leaf: dict[str, Any],
    author: dict[str, Any],
    experts: list[dict[str, Any]],
) -> dict[str, Any]:
    dom = _DOMAINS[leaf["domain"]]
    things = _LEAF_THINGS[leaf["name"]]
    tools = rng.sample(things, min(2, len(things))) if things else []
    ctx: dict[str, str | None] = {
        "task": topic["task"],
        "task_full": topic["task_full"],
        "doing": topic["doing"],
        "Doing": _cap(topic["doing"]),
        "the_o": topic["the_o"],
        "it": topic["it"] if topic["the_o"] else None,
        "tool": tools[0][0] if tools else None,
        "tool2": tools[1][0] if len(tools) > 1 else None,
        "field": dom["field"],
    }

    # Intro: opener, optional domain sentence, closer.
    used: set[str] = set()
    intro = [_draw([_shuffled(_INTRO_OPENERS, rng)], [1.0], ctx, rng, used, 3, 40)]
    if rng.random() < 0.6:
        intro.append(_draw([_shuffled(dom["intro"], rng)], [1.0], ctx, rng, used, 3, 40))
    intro.append(_draw([_shuffled(_INTRO_CLOSERS, rng)], [1.0], ctx, rng, used, 3, 40))

    # Methods: titles kept in their logical bank order.
    # The core "{Doing}" method is always present and favours the category-specific steps;
    # the others (preparation, alternatives, follow-up) lean on domain and generic steps.
    title_bank = [*leaf.get("methods", ()), *dom["methods"]]
    title_bank = [t for t in title_bank if _usable(t, ctx)]
    core = title_bank.index("{Doing}")
    n_methods = rng.choices((1, 2, 3), weights=(3, 4, 3))[0]
    others = [i for i in range(len(title_bank)) if i != core]
    picks = sorted([core, *rng.sample(others, n_methods - 1)])
    generic = list(_GENERIC_STEPS) + (list(_PHYSICAL_STEPS) if leaf["phys"] else [])
    pools = [
        _shuffled(leaf["steps"], rng),
        _shuffled(dom["steps"], rng),
        _shuffled(generic, rng),
    ]
    methods: list[dict[str, Any]] = []
    for i in picks:
        mtitle = _titlecase(_fill(title_bank[i], ctx, rng))
        weights = [6.0, 2.0, 1.5] if i == core else [1.5, 3.0, 2.5]
        steps: list[str] = []
        for _ in range(rng.randint(3, 6)):
            step = _draw(pools, weights, ctx, rng, used)
            if step is not None:
                steps.append(step)
        methods.append({"title": mtitle, "steps": steps})

    tip_pools = [_shuffled(dom["tips"], rng), _shuffled(_GENERIC_TIPS, rng)]
    tips = [_draw(tip_pools, [1.5, 1.0], ctx, rng, used, 5, 30) for _ in range(rng.randint(1, 4))]
    generic_warnings = [*_GENERIC_WARNINGS, *(_PHYSICAL_WARNINGS if leaf["phys"] else ())]
    warn_pools = [_shuffled(dom["warnings"], rng), _shuffled(generic_warnings, rng)]
    n_warn = rng.choices((0, 1, 2, 3), weights=(2, 4, 3, 1))[0]
    warnings = [_draw(warn_pools, [2.0, 1.0], ctx, rng, used, 5, 30) for _ in range(n_warn)]

    # Things needed: the supplies named in the text first, then a few extras.
    needed: list[str] = []
    if things and (leaf["phys"] or rng.random() < 0.4):
        text = " ".join(s for m in methods for s in m["steps"])
        needed = [disp for form, disp in tools if form in text]
        extras = [disp for _, disp in things if disp not in needed]
        rng.shuffle(extras)
        target = rng.randint(max(2, len(needed)), min(6, len(things)))
        needed += extras[: max(0, target - len(needed))]

    # Integer-only arithmetic keeps the numbers identical on every platform.
    magnitude = rng.choices((0, 1, 2, 3), weights=(3, 5, 4, 2))[0]
    lead = rng.randint(1000, 4999 if magnitude == 3 else 9999)
    views = lead * 10**magnitude + rng.randrange(10**magnitude)
    coauthors = 1 + 11 * magnitude + rng.randint(-3, 12)
    updated = _DATE0 + timedelta(days=rng.randrange(_DATE_SPAN))

    slug = topic["slug"]
    return {
        "slug": slug,
        "title": topic["title"],
        "category": leaf["name"],
        "author": author["name"],
        "intro": " ".join(s for s in intro if s),
        "methods": methods,
        "tips": [t for t in tips if t],
        "warnings": [w for w in warnings if w],
        "things_needed": needed,
        "references": _references(rng, slug, _slugify(topic["obj"]).lower(), dom, experts),
        "views": views,
        "coauthors": max(1, min(60, coauthors)),
        "updated": _date_text(updated),
        "related": [],
    }


# ---------------------------------------------------------------------------------------------
# Corpus assembly
# ---------------------------------------------------------------------------------------------


def _collect_topics(rng: Random, n_articles: int) -> list[dict[str, Any]]:
    """All topics (title + text slots + leaf + family id) in a deterministic order."""
    topics: list[dict[str, Any]] = []
    seen_titles: set[str] = set()
    seen_slugs: set[str] = set()

    def add(member: dict[str, Any], leaf: dict[str, Any], family: int) -> bool:
        slug = _slugify(member["title"][len("How to ") :])
        if member["title"].lower() in seen_titles or slug.lower() in seen_slugs:
            return False
        seen_titles.add(member["title"].lower())
        seen_slugs.add(slug.lower())
        topics.append({**member, "slug": slug, "leaf": leaf, "family": family})
        return True

    family = 0
    for leaf in _LEAVES:
        quals = _DOMAINS[leaf["domain"]]["quals"]
        for line in _lines(leaf["groups"]):
            for raw in line.split(" ; "):
                add(_parse_member(raw), leaf, family)
            family += 1
        for raw in _lines(leaf["singles"]):
            member = _parse_member(raw)
            if not member["qual"] and member["the_o"] and rng.random() < 0.1:
                qual = rng.choice(quals)
                member = _parse_member(f"{member['verb']}|{member['obj']}|{member['flags']}|{qual}")
            add(member, leaf, family)
            family += 1

    if len(topics) < n_articles:
        # Extend with qualifier variants ("... for Beginners") that join the base's family.
        candidates: list[tuple[dict[str, Any], str]] = []
        for base in topics:
            if base["qual"] or base["fixed"]:
                continue
            for qual in (*_DOMAINS[base["leaf"]["domain"]]["quals"], "for beginners"):
                candidates.append((base, qual))
        rng.shuffle(candidates)
        for base, qual in candidates:
            if len(topics) >= n_articles:
                break
            member = _parse_member(f"{base['verb']}|{base['obj']}|{base['flags']}|{qual}")
            add(member, base["leaf"], base["family"])
        if len(topics) < n_articles:
            raise ValueError(f"n_articles={n_articles} exceeds what the topic banks can produce")
    return topics


def _pick_author(
    rng: Random, authors: list[dict[str, Any]], experts: list[dict[str, Any]]
) -> dict[str, Any]:
    if experts and rng.random() < 0.75:
        return rng.choice(experts)
    return rng.choice([a for a in authors if not a["_parents"]])


def _build(seed: int, n_articles: int) -> tuple[dict[str, Any], list[list[str]]]:
    """Build the corpus and also return its near-duplicate families (lists of slugs)."""
    rng = Random(seed)
    authors = _build_authors(rng)
    topics = _collect_topics(rng, n_articles)

    experts_by_parent: dict[str, list[dict[str, Any]]] = {}
    for leaf in _LEAVES:
        parent = leaf["parent"]
        if parent not in experts_by_parent:
            experts_by_parent[parent] = [a for a in authors if parent in a["_parents"]]

    articles: list[dict[str, Any]] = []
    for topic in topics:
        leaf = topic["leaf"]
        experts = experts_by_parent[leaf["parent"]]
        author = _pick_author(rng, authors, experts)
        articles.append(_write_article(rng, topic, leaf, author, experts))

    # Related articles: family first, then same category, same parent, anything.
    by_family: dict[int, list[int]] = {}
    by_leaf: dict[str, list[int]] = {}
    by_parent: dict[str, list[int]] = {}
    for i, topic in enumerate(topics):
        by_family.setdefault(topic["family"], []).append(i)
        by_leaf.setdefault(topic["leaf"]["name"], []).append(i)
        by_parent.setdefault(topic["leaf"]["parent"], []).append(i)
    everyone = list(range(len(topics)))
    for i, topic in enumerate(topics):
        k = rng.randint(3, 5)
        chosen: list[int] = []
        tiers = (
            by_family[topic["family"]],
            by_leaf[topic["leaf"]["name"]],
            by_parent[topic["leaf"]["parent"]],
            everyone,
        )
        for tier in tiers:
            pool = [j for j in tier if j != i and j not in chosen]
            need = k - len(chosen)
            if need <= 0:
                break
            chosen += rng.sample(pool, min(need, len(pool)))
        articles[i]["related"] = [articles[j]["slug"] for j in chosen]

    families = [
        [articles[j]["slug"] for j in members] for members in by_family.values() if len(members) > 1
    ]
    rng.shuffle(articles)

    corpus = {
        "format": _FORMAT,
        "version": _VERSION,
        "seed": seed,
        "categories": [{"name": leaf["name"], "parent": leaf["parent"]} for leaf in _LEAVES],
        "authors": [
            {"name": a["name"], "slug": a["slug"], "bio": a["bio"], "role": a["role"]}
            for a in authors
        ],
        "articles": articles,
    }
    return corpus, families


def generate_corpus(seed: int = 20240501, n_articles: int = 640) -> dict:
    """Generate the synthetic WikiHow corpus.

    The result is a pure function of the arguments: the same ``seed`` and ``n_articles`` give
    an identical dict (and identical ``json.dumps`` bytes) on every run and machine.

    Args:
        seed: Seed for the single ``random.Random`` instance that drives every choice.
        n_articles: Minimum number of articles. The hand-written topic banks yield about 700
            articles; if more are requested, qualifier variants ("... for Beginners") of
            existing topics are added until the count is reached.

    Returns:
        A dict with keys ``format`` (``"gui-gym/wikihow-corpus"``), ``version`` (1), ``seed``,
        ``categories`` (``{"name", "parent"}`` leaf categories), ``authors`` (``{"name",
        "slug", "bio", "role"}``) and ``articles`` (each with ``slug``, ``title``,
        ``category``, ``author``, ``intro``, ``methods``, ``tips``, ``warnings``,
        ``things_needed``, ``references``, ``views``, ``coauthors``, ``updated`` and
        ``related``).

    Raises:
        ValueError: If ``n_articles`` is larger than the banks plus qualifier variants allow.
    """
    corpus, _ = _build(seed, n_articles)
    return corpus


if __name__ == "__main__":
    _corpus, _families = _build(20240501, 640)
    _size = len(json.dumps(_corpus).encode("utf-8"))
    _parents = sorted({c["parent"] for c in _corpus["categories"]})
    _in_fam = sum(len(f) for f in _families)
    print(f"articles:   {len(_corpus['articles'])}")
    print(f"categories: {len(_corpus['categories'])} leaves under {len(_parents)} parents")
    print(f"authors:    {len(_corpus['authors'])}")
    print(f"families:   {len(_families)} near-duplicate families, {_in_fam} articles")
    print(f"json bytes: {_size}")
